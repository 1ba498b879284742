import { isIPv6 } from "node:net";
import { invalidArgument } from "./errors.js";

/** The instance's SMTP configuration without its (write-only) password. */
export interface SmtpSettings {
  senderAddress: string;
  senderName: string;
  tls: boolean;
  host: string;
  user: string;
}

export interface SmtpEndpoint {
  hostname: string;
  port: number;
}

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** Parses `host` as `name:port` or `[ipv6]:port` with a port from 1 to 65535 (`smtp.host_invalid` otherwise). */
export function parseSmtpHost(host: string): SmtpEndpoint {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(host);
  const hostname = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  let problem: string | undefined;
  // Stryker disable next-line LogicalOperator: a match always has a host name of at least one character, so !match and !hostname are the same test
  if (!match || !hostname) problem = "must be name:port or [ipv6]:port";
  else if (match[1] !== undefined && !isIPv6(hostname)) problem = "the bracketed part must be an IPv6 address";
  else if (match[2] !== undefined && !HOSTNAME.test(hostname)) problem = "the name is not a valid host name or IPv4 address";
  else if (!Number.isInteger(port) || port < 1 || port > 65535) problem = "the port must be from 1 to 65535";
  if (problem) throw invalidArgument("smtp.host_invalid", `host ${problem}`, [{ field: "host", description: problem, rule: "smtp.host_invalid" }]);
  return { hostname: hostname!, port };
}

/**
 * Credentials never follow a configuration to another server, nor to a weaker channel: a new host
 * or user, or turning required TLS off, drops the stored password, which must then be set again.
 * A password given while TLS was required was given for an encrypted channel only.
 */
export function dropsPassword(current: SmtpSettings, next: SmtpSettings): boolean {
  return current.host !== next.host || current.user !== next.user || (current.tls && !next.tls);
}

export function sameSettings(a: SmtpSettings, b: SmtpSettings): boolean {
  return a.senderAddress === b.senderAddress && a.senderName === b.senderName && a.tls === b.tls && a.host === b.host && a.user === b.user;
}

/** Associated data binding the sealed SMTP password to its instance (it opens nowhere else). */
export const smtpPasswordContext = (instanceId: string) => `smtp:${instanceId}:password`;
