import type { DestinationStream } from "pino";

/** A batch is written at once when it grows past this, without waiting for the end of the turn. */
export const BATCH_BYTES = 64 * 1024;

/**
 * Log lines written together: the lines of one turn of the event loop go out in one write at its end (or as soon as
 * they pass `maxBytes`), in order. One write per line was one system call per call — a good part of what a cheap call's
 * log line cost. `flush()` writes what is pending at once (at exit).
 */
export function createBatchedLines(sink: { write(text: string): unknown }, maxBytes = BATCH_BYTES): DestinationStream & { flush(): void } {
  let pending: string[] = [];
  let size = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.join("");
    pending = [];
    size = 0;
    sink.write(text);
  };
  return {
    write(line: string) {
      pending.push(line);
      size += line.length;
      if (size >= maxBytes) flush();
      else if (!scheduled) {
        scheduled = true;
        // Never what keeps the process alive: at exit, the exit handler writes what is left.
        setImmediate(flush).unref();
      }
    },
    flush,
  };
}

let stdoutLines: ReturnType<typeof createBatchedLines> | undefined;

/**
 * process.stdout, batched. What is pending is written when the process emits 'exit' — a normal end, process.exit
 * (after a fatal line too), an uncaught exception; `gatehouse serve` turns SIGTERM, SIGINT and SIGHUP into a stop
 * (src/main.ts). A write to a file, or to a pipe with room, completes inside the exit handler. A process ended by a
 * signal it does not handle (SIGKILL, SIGQUIT, an abort) loses the lines of its last turn.
 */
export function batchedStdout(): DestinationStream {
  if (!stdoutLines) {
    const lines = createBatchedLines(process.stdout);
    process.on("exit", lines.flush);
    stdoutLines = lines;
  }
  return stdoutLines;
}
