import type { Interceptor } from "@connectrpc/connect";

/** What an interceptor calls on (connect-es does not export the type), and the request it takes. */
export type Next = Parameters<Interceptor>[0];
export type AnyRequest = Parameters<Next>[0];
