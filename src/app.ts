import type { DestinationStream } from "pino";
import { ensureBootstrapped } from "./bootstrap.js";
import { type Config, dataFiles } from "./config.js";
import type { Deps } from "./context.js";
import { createHealthState } from "./api/health/health-service.js";
import { createAdmission, createAuthenticationInterceptor, createAuthenticator } from "./interceptors/authentication.js";
import { createDurabilityInterceptor } from "./interceptors/durability.js";
import { createDeprecationInterceptor } from "./interceptors/deprecation.js";
import { createErrorMappingInterceptor } from "./interceptors/error-mapping.js";
import { createObserveInterceptor } from "./interceptors/observe.js";
import { createValidationInterceptor } from "./interceptors/validation.js";
import { createDeliveryWorker } from "./notify/delivery-worker.js";
import { createRoutes, SERVED_SERVICES } from "./routes.js";
import { createServer } from "./server.js";
import { createSqliteStore } from "./store/sqlite/sqlite-store.js";
import type { Store } from "./store/store.js";
import { checkTlsFiles, prepareDataDir, readStartupFile } from "./startup/files.js";
import { openDatabase } from "./startup/open-database.js";
import { isDamage, runPageCheck } from "./startup/page-check.js";
import { StartupError } from "./startup/startup-error.js";
import { openPostgresDatabase } from "./startup/open-postgres.js";
import { type DataDirLock, lockDataDir } from "./support/data-dir-lock.js";
import { reservePort } from "./transport/port-reservation.js";
import { HealthCheckResponse_ServingStatus as ServingStatus } from "../gen/grpc/health/v1/health_pb.js";
import { type Clock, systemClock } from "./support/clock.js";
import { checkMasterKey, loadMasterKey, loadSharedMasterKey } from "./startup/master-key.js";
import { closeImportedHashVerifier } from "./support/password-verify/verify.js";
import { createIdGenerator, type IdGenerator } from "./support/ids.js";
import { createLogger, type Logger } from "./support/logger.js";
import { createMetrics, type Metrics } from "./support/metrics.js";
import { createPages } from "./pages/pages.js";
import { installStacklessAbortReasons } from "./support/abort-reasons.js";

export interface GatehouseOptions {
  config: Config;
  clock?: Clock;
  ids?: IdGenerator;
  /** Where JSON log lines go (stdout by default); tests capture them here. */
  logDestination?: DestinationStream;
  /**
   * The page check that runs beside a started server found the database damaged: after the fatal log line, the
   * process exits (1) by default, as when a sync of the log fails. Tests watch it here.
   */
  onDamagedDatabase?: () => void;
}

export interface Gatehouse {
  /** Base URL of the listener, e.g. `http://127.0.0.1:8080`. */
  url: string;
  port: number;
  deps: Deps;
  logger: Logger;
  metrics: Metrics;
  /** Graceful stop: NOT_SERVING, stop accepting, drain in-flight calls, close the database. */
  close(): Promise<void>;
}

/**
 * Wires configuration into a running server. The order is what makes failures safe: TLS files are
 * read and the port is bound before anything is written, so a failed first start leaves the data dir
 * as it found it; then the data dir is locked (one server per dir), the master key loaded (never
 * generated for an existing database) and checked, the database opened and migrated, bootstrap run.
 */
export async function startGatehouse(options: GatehouseOptions): Promise<Gatehouse> {
  installStacklessAbortReasons();
  const { config } = options;
  const logger = createLogger(config.logLevel, options.logDestination);
  const files = dataFiles(config);
  if (config.tls) checkTlsFiles(config.tls);
  const smtpCa = config.mail.smtpCaFile ? readStartupFile(config.mail.smtpCaFile, "SMTP CA file", "--smtp-ca-file") : undefined;
  const reservation = await reservePort(config.port, config.host);
  let lock: DataDirLock | undefined;
  let store: Store | undefined;
  try {
    prepareDataDir(config.dataDir);
    // PostgreSQL: replicas share the database and the key (from configuration); the data dir keeps only this process's
    // files (mail copies, admin.pat), so it is not locked.
    const keyFile = config.masterKeyFile ?? files.masterKey;
    if (!config.database) lock = lockDataDir(config.dataDir);
    const masterKey = config.database ? loadSharedMasterKey(keyFile) : loadMasterKey(keyFile, files.database);
    const metrics = createMetrics();
    const onSync = (commits: number) => metrics.commitsPerSync.observe(commits);
    // The disk refused to make writes durable: nothing written since can be trusted to be on disk. Stop at once,
    // without closing the database (a close would checkpoint from memory); the next start recovers from the disk.
    // Stryker disable BlockStatement,ObjectLiteral,StringLiteral: these run only when the disk fails a sync or a commit, and then stop the process; the store's refusal of every later write is tested (test/store/group-commit.test.ts, commit-batches.test.ts)
    const onSyncFailure = (error: unknown) => {
      logger.fatal({ err: error }, "the database log could not be synced to disk: stopping; check the disk, and reboot before restarting if it failed");
      process.exit(1);
    };
    // A batch of writes was rolled back whole (a full or failing disk): none of its writes was acknowledged, but calls
    // may have read its rows; the store now refuses everything, and the process stops so that a restart starts clean.
    const onBatchLost = (error: unknown) => {
      logger.fatal({ err: error }, "a batch of writes could not be committed: stopping; none of its writes was acknowledged; check the disk (space, errors) before restarting");
      process.exit(1);
    };
    // Stryker restore BlockStatement,ObjectLiteral,StringLiteral
    // After a clean close the pages are read once the server answers (open-database.ts), not before; until that read
    // is done, a clean close of this run vouches for nothing (the next start reads them first).
    let checkPages: ((signal: AbortSignal) => Promise<void>) | undefined;
    let pagesChecked = true;
    const opened = config.database
      ? await openPostgresDatabase(config.database)
      : openDatabase(
          () => createSqliteStore({ path: files.database, synchronous: config.dbSynchronous, busyTimeoutMs: 5_000, onSync, onSyncFailure, onBatchLost, pagesChecked: () => pagesChecked }),
          files.database,
          {
            checkLater: (check) => {
              pagesChecked = false;
              checkPages = check;
            },
          },
        );
    store = opened;
    await checkMasterKey(opened, masterKey, keyFile);
    const deps: Deps = { store: opened, clock: options.clock ?? systemClock, ids: options.ids ?? createIdGenerator(), masterKey, externalUrl: config.externalUrl };
    await ensureBootstrapped(deps, files.adminToken, logger);
    const smtpClient = { timeoutMs: config.mail.smtpTimeoutMs, ...(smtpCa ? { ca: smtpCa } : {}) };
    const health = createHealthState();
    const authenticateCall = createAuthenticator(deps);
    const server = createServer({
      config,
      routes: createRoutes(deps, health, smtpClient),
      admit: createAdmission(authenticateCall),
      // Outermost first: every call is observed, deprecated calls are marked, every error is mapped,
      // every answer waits until what it reflects is durable, then the caller is authenticated before the
      // request is validated (unauthenticated callers learn nothing).
      interceptors: [
        createObserveInterceptor(logger, metrics),
        createDeprecationInterceptor(metrics),
        createErrorMappingInterceptor(logger),
        createDurabilityInterceptor(opened),
        createAuthenticationInterceptor(authenticateCall),
        createValidationInterceptor(SERVED_SERVICES),
      ],
      isReady: () => health.status() === ServingStatus.SERVING,
      metrics,
      logger,
      pages: createPages(deps, logger, { formTimeoutMs: config.requestTimeoutMs }),
    });
    const worker = createDeliveryWorker(deps, logger, metrics, {
      pollMs: config.mail.pollMs,
      maxAttempts: config.mail.maxAttempts,
      retryBaseMs: config.mail.retryBaseMs,
      // (loadConfig always sets a retention, so the `true` mutant is equivalent; test/server/wiring-survivors.test.ts
      // states the rest.)
      ...(config.mail.retentionMs !== undefined ? { retentionMs: config.mail.retentionMs } : {}),
      mailDir: files.mailDir,
      smtp: smtpClient,
    });
    const { port } = await server.listen(reservation);
    worker.start();
    const pageCheck = runPageCheck(checkPages, {
      logger,
      database: files.database,
      onChecked: () => (pagesChecked = true),
      // Stryker disable next-line ArrowFunction: the default stops the process, which no in-process test survives: each passes its own (test/startup/clean-close.test.ts)
      onDamaged: options.onDamagedDatabase ?? (() => process.exit(1)),
    });
    const scheme = config.tls ? "https" : "http";
    const url = `${scheme}://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
    logger.info(
      {
        url,
        dataDir: config.dataDir,
        // Stryker disable next-line ObjectLiteral: the database's field is PostgreSQL's (test/postgres/database-url-secret-and-shared-dir.test.ts reads it), outside the mutation run
        ...(config.database ? { database: config.database.display } : {}),
      },
      "gatehouse listening",
    );
    const heldLock = lock;
    return {
      url,
      port,
      deps,
      logger,
      metrics,
      async close() {
        pageCheck.abort();
        health.setServing(false);
        await server.close(config.shutdownTimeoutMs);
        // After the drain, so calls still in flight finish their verification instead of failing unavailable.
        await closeImportedHashVerifier();
        // The message being handed to the SMTP server finishes and is recorded before the DB closes.
        await worker.stop();
        await opened.close();
        heldLock?.release();
        logger.info("gatehouse stopped");
      },
    };
  } catch (error) {
    // The operator sees one line (main.ts); the details are here, at debug level.
    logger.debug({ err: error }, "start-up failed");
    // What failed comes first: a close that fails too (a damaged file) is logged, and the lock and the port are given
    // back either way.
    // Stryker disable next-line ArrowFunction,ObjectLiteral,StringLiteral: a debug line for a close that fails after a failed start (a damaged file whose close fails too), which no test makes happen on demand
    await store?.close().catch((closeError: unknown) => logger.debug({ err: closeError }, "closing the database after the failed start failed too"));
    lock?.release();
    await reservation.release();
    // A damaged page read before the server answered (the master key's probe, the bootstrap): the line a damaged file
    // gets when the pages are read first.
    if (isDamage(error) && !config.database) {
      throw new StartupError(`database ${files.database} is corrupted (${(error as { code: string }).code}): restore it from a backup (gatehouse restore)`, { cause: error });
    }
    throw error;
  }
}

