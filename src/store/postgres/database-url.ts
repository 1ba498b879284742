/** Query parameters of a connection URL that hold secrets. */
const SECRET_PARAMETERS = new Set(["password", "sslpassword"]);

/**
 * A PostgreSQL connection URL (`postgres://` or `postgresql://`, libpq's form) as Gatehouse accepts it, and how it is
 * shown: never with its password (logs, start-up errors).
 */
export function parsePostgresUrl(raw: string): { url: string; display: string } | undefined {
  if (!URL.canParse(raw)) return undefined;
  const parsed = new URL(raw);
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") return undefined;
  if (parsed.password !== "") parsed.password = "***";
  // libpq also takes the password (and the client key's) as query parameters.
  for (const name of [...parsed.searchParams.keys()]) {
    if (SECRET_PARAMETERS.has(name.toLowerCase())) parsed.searchParams.set(name, "***");
  }
  return { url: raw, display: parsed.toString() };
}
