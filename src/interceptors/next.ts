import type { Interceptor } from "@connectrpc/connect";

/** What an interceptor calls on (connect-es does not export the type), and the request it takes. */
export type Next = Parameters<Interceptor>[0];
export type AnyRequest = Parameters<Next>[0];

/**
 * The inner call's answer as a promise: a synchronous throw (an interceptor that is no async function may throw
 * before it makes its promise) becomes its rejection, so promise callbacks see every failure.
 */
export function answerOf(next: Next, req: AnyRequest): ReturnType<Next> {
  try {
    return next(req);
  } catch (error) {
    return Promise.reject(error);
  }
}
