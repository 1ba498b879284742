/** Services that answer without a token: health checks and the schema (reflection) are public by design. */
export const PUBLIC_SERVICES: ReadonlySet<string> = new Set([
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
]);
