/** A link under GATEHOUSE_EXTERNAL_URL with query parameters, encoded properly. */
export function externalLink(externalUrl: string, path: string, query: Record<string, string>): string {
  const url = new URL(`${externalUrl}${path}`);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  return url.toString();
}
