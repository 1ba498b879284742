import type { Commit, RowWrite } from "../../src/store/commit.js";

/** The time every fixture commit is made at. */
export const FIXTURE_AT = new Date("2026-01-01T00:00:00Z");

/** A commit of `writes` and no events, by the actor "tester" in instance i1. */
export const commitOf = (writes: RowWrite[]): Commit => ({ instanceId: "i1", actor: "tester", at: FIXTURE_AT, writes, events: [] });

/** A machine user of organization o1 whose user name is its id. */
export const machineUser = (id: string): RowWrite => ({
  kind: "user.insert",
  row: { id, instanceId: "i1", orgId: "o1", type: "machine", state: "active", userName: id, userNameKey: id, machineName: "m", machineDescription: "" },
});
