import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport, Http2SessionManager } from "@connectrpc/connect-node";

/** The protocol/HTTP combinations every RPC is tested over, all against the same port. */
export const PROTOCOLS = ["connect-json-http1", "connect-proto-h2c", "grpc-h2c", "grpc-web-http1"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export interface CallOptions {
  token?: string;
  /** Sent as `x-service-orgid`. */
  orgId?: string;
  /** Sent verbatim as `Authorization`. */
  authorization?: string;
}

function headers(options: CallOptions): Interceptor {
  return (next) => async (req) => {
    if (options.authorization !== undefined) req.header.set("authorization", options.authorization);
    else if (options.token) req.header.set("authorization", `Bearer ${options.token}`);
    if (options.orgId) req.header.set("x-service-orgid", options.orgId);
    return next(req);
  };
}

/**
 * Real clients (connect-node transports) for each protocol. HTTP/2 sessions are tracked so `close()`
 * ends them and the server can drain.
 */
export class Clients {
  private readonly sessions: Http2SessionManager[] = [];

  constructor(private readonly baseUrl: string) {}

  transport(protocol: Protocol, options: CallOptions = {}): Transport {
    const interceptors = [headers(options)];
    const baseUrl = this.baseUrl;
    switch (protocol) {
      case "connect-json-http1":
        return createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false, interceptors });
      case "connect-proto-h2c":
        return createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true, interceptors, sessionManager: this.session() });
      case "grpc-h2c":
        return createGrpcTransport({ baseUrl, interceptors, sessionManager: this.session() });
      case "grpc-web-http1":
        return createGrpcWebTransport({ baseUrl, httpVersion: "1.1", interceptors });
    }
  }

  client<T extends DescService>(service: T, protocol: Protocol, options: CallOptions = {}): Client<T> {
    return createClient(service, this.transport(protocol, options));
  }

  close(): void {
    for (const session of this.sessions.splice(0)) session.abort();
  }

  private session(): Http2SessionManager {
    const manager = new Http2SessionManager(this.baseUrl);
    this.sessions.push(manager);
    return manager;
  }
}
