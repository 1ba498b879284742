import { startGatehouse } from "./app.js";
import { ConfigError, loadConfig } from "./config.js";

// The only module with process side effects: read config, start, and stop cleanly on a signal.
let config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`gatehouse: ${error.message}\n`);
  process.exit(2);
}

const gatehouse = await startGatehouse({ config });
let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  gatehouse.logger.info({ signal }, "stopping: draining in-flight calls");
  gatehouse.close().then(
    () => process.exit(0),
    (error: unknown) => {
      gatehouse.logger.error({ err: error }, "unclean stop");
      process.exit(1);
    },
  );
};
process.on("SIGTERM", () => stop("SIGTERM"));
process.on("SIGINT", () => stop("SIGINT"));
