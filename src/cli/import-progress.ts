/** What an import has done so far, by outcome; `done` counts rows from the file's first (a resumed run starts at --from). */
export interface ImportCounts {
  done: number;
  total: number;
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  rejected: number;
}

export interface ProgressOutput {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

const TTY_EVERY_MS = 200;
const PLAIN_EVERY_MS = 5_000;
/** The rate is the users done over about this much of the recent past, so the ETA follows a rate that changes. */
const RATE_WINDOW_MS = 5_000;

const number = (n: number) => Math.round(n).toLocaleString("en-US");

/** 75 s → "1:15", 3725 s → "1:02:05". */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const parts = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const [h, m, sec] = parts as [number, number, number];
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${String(sec).padStart(2, "0")}` : `${m}:${String(sec).padStart(2, "0")}`;
}

/**
 * The import's progress: on a terminal a bar redrawn in place (users/s, done/total, errors, ETA) a few times a second;
 * otherwise (a log, a pipe) a plain line every few seconds. `now` is injectable for tests.
 */
export function createProgress(out: ProgressOutput, startDone: number, now: () => number = () => performance.now()) {
  const tty = out.isTTY === true;
  const samples: { at: number; done: number }[] = [{ at: now(), done: startDone }];
  let shownAt = -Infinity;
  let drawn = false;

  const rate = () => {
    const last = samples[samples.length - 1]!;
    const first = samples[0]!;
    const seconds = (last.at - first.at) / 1000;
    return seconds > 0 ? (last.done - first.done) / seconds : 0;
  };
  const line = (counts: ImportCounts) => {
    const perSecond = rate();
    const share = counts.total > 0 ? Math.min(1, counts.done / counts.total) : 1;
    const eta = perSecond > 0 ? duration((counts.total - counts.done) / perSecond) : "–";
    const figures = `${number(counts.done)}/${number(counts.total)} users · ${number(perSecond)} users/s · ${number(counts.rejected)} errors · ETA ${eta}`;
    if (!tty) return `import: ${figures} (${Math.floor(share * 100)}%)\n`;
    const width = Math.max(10, Math.min(30, (out.columns ?? 80) - figures.length - 10));
    const filled = Math.round(share * width);
    return `\r\u001b[K[${"#".repeat(filled)}${".".repeat(width - filled)}] ${String(Math.floor(share * 100)).padStart(3)}% ${figures}`;
  };

  return {
    /** Notes the counts; shows them when it is time to. */
    update(counts: ImportCounts): void {
      const at = now();
      samples.push({ at, done: counts.done });
      // The oldest sample kept is the last one at least the window old (samples[1] exists: there are two since the push).
      while (
        at - samples[1]!.at >= RATE_WINDOW_MS &&
        // (With two samples the second is the one just pushed, so the window test above already stops the loop: the
        // `true` mutant here is equivalent, and so is `>= 2`.)
        // Stryker disable next-line EqualityOperator: as above
        samples.length > 2
      )
        samples.shift();
      if (at - shownAt < (tty ? TTY_EVERY_MS : PLAIN_EVERY_MS)) return;
      shownAt = at;
      out.write(line(counts));
      drawn = tty;
    },
    /** Clears the bar (a terminal's), so the summary starts on a clean line. */
    clear(): void {
      if (drawn) out.write("\r\u001b[K");
      drawn = false;
    },
  };
}

/** The closing line: what was done, how fast, and where the rejected rows are. */
export function summary(counts: ImportCounts, startDone: number, seconds: number, report: string | undefined): string {
  const handled = counts.done - startDone;
  const rate = seconds > 0 ? handled / seconds : 0;
  const outcomes = [
    `${number(counts.created)} created`,
    `${number(counts.updated)} updated`,
    `${number(counts.unchanged)} unchanged`,
    `${number(counts.skipped)} skipped`,
    `${number(counts.rejected)} rejected`,
  ].join(", ");
  const where = counts.rejected > 0 && report ? ` — the rejected rows and why are in ${report}` : "";
  return `${number(handled)} rows in ${duration(seconds)} (${number(rate)} users/s): ${outcomes}${where}`;
}
