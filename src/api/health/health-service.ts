import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { EventEmitter, on } from "node:events";
import { type Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../../gen/grpc/health/v1/health_pb.js";

/** Serving state shared by the health service and the shutdown sequence. */
export interface HealthState {
  status(): ServingStatus;
  setServing(serving: boolean): void;
  readonly changes: EventEmitter;
}

export function createHealthState(): HealthState {
  let current = ServingStatus.SERVING;
  const changes = new EventEmitter();
  changes.setMaxListeners(0);
  return {
    status: () => current,
    setServing(serving) {
      current = serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
      changes.emit("change", current);
    },
    changes,
  };
}

/**
 * grpc.health.v1: "" (the server) and every served service report the server's state; NOT_SERVING
 * once shutdown starts, so load balancers stop sending traffic while in-flight calls finish.
 */
export function createHealthService(state: HealthState, serviceNames: string[]): Partial<ServiceImpl<typeof Health>> {
  const known = new Set(["", ...serviceNames]);
  const statusOf = (service: string) => (known.has(service) ? state.status() : ServingStatus.SERVICE_UNKNOWN);
  return {
    check(request) {
      if (!known.has(request.service)) throw new ConnectError(`unknown service ${request.service}`, Code.NotFound);
      return { status: state.status() };
    },
    list() {
      return { statuses: Object.fromEntries([...known].map((name) => [name, { status: state.status() }])) };
    },
    async *watch(request, context) {
      yield { status: statusOf(request.service) };
      // NOT_SERVING only comes with shutdown: say so and end the stream, so the stop is not held up.
      if (state.status() === ServingStatus.NOT_SERVING) return;
      try {
        for await (const _ of on(state.changes, "change", { signal: context.signal })) {
          yield { status: statusOf(request.service) };
          if (state.status() === ServingStatus.NOT_SERVING) return;
        }
      }
      // Stryker disable next-line BlockStatement: the errors that get here are the watcher's abort and a failed write connect throws into the stream (nothing emits "error" on state.changes); the stream ends either way, and connect fails the call with its own reason whether the generator rethrows or returns
      catch (error) {
        // Stryker disable next-line ConditionalExpression: as above: rethrown or not, the stream ends and connect reports its own reason
        if (!context.signal.aborted) throw error;
      }
    },
  };
}
