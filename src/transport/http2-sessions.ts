import type http2 from "node:http2";

/**
 * The server's HTTP/2 sessions, so a graceful stop can GOAWAY them, and so a session without an
 * open stream does not hold its socket forever: after `idleTimeoutMs` without a stream it is
 * closed with GOAWAY (clients reconnect on their next call).
 */
export function createHttp2Sessions(options: { idleTimeoutMs: number }) {
  const sessions = new Set<http2.ServerHttp2Session>();

  return {
    track(session: http2.ServerHttp2Session): void {
      sessions.add(session);
      let openStreams = 0;
      let idleTimer: NodeJS.Timeout | undefined;
      const startIdleTimer = () => {
        idleTimer = setTimeout(() => session.close(), options.idleTimeoutMs);
        idleTimer.unref();
      };
      startIdleTimer();
      session.on("stream", (stream: http2.ServerHttp2Stream) => {
        openStreams++;
        clearTimeout(idleTimer);
        stream.once("close", () => {
          openStreams--;
          if (openStreams === 0 && !session.closed && !session.destroyed) startIdleTimer();
        });
      });
      session.once("close", () => {
        clearTimeout(idleTimer);
        sessions.delete(session);
      });
    },

    /** GOAWAY: clients open no new streams; open ones finish, then each session closes. */
    closeAll(): void {
      for (const session of sessions) session.close();
    },

    destroyAll(): void {
      for (const session of sessions) session.destroy();
    },

    get size(): number {
      return sessions.size;
    },
  };
}
