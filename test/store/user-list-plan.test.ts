import { describe, expect, it } from "vitest";
import type { UserFilter } from "../../src/store/store.js";
import { useRecordedPlans } from "./query-plans.js";

// Store.listUsers / countUsers (ListUsers): a page costs what the page holds, not the organization's size (bench
// finding 3: every page read and sorted the whole organization). SQLite's plan of each statement the store runs
// reads the users through an index of the filter and never sorts: the page follows the index order.

const { store, plansOf } = useRecordedPlans();

describe("the users a ListUsers filter selects", () => {
  it.each<[string, UserFilter, RegExp]>([
    ["an organization's users", { instanceId: "i1", orgId: "o1" }, /SEARCH users USING (COVERING )?INDEX users_org \(org_id=\?/],
    ["one user name", { instanceId: "i1", orgId: "o1", userNameKey: "ada" }, /SEARCH users USING INDEX users_user_name_key \(instance_id=\? AND user_name_key=\?\)/],
    ["one email", { instanceId: "i1", orgId: "o1", emailKey: "ada@example.com" }, /SEARCH users USING (COVERING )?INDEX users_email \(instance_id=\? AND email_key=\?/],
  ])("%s: counted and paged through an index of the filter, never sorted", async (_name, filter, index) => {
    const plans = await plansOf("users", async () => {
      await store().countUsers(filter);
      await store().listUsers({ ...filter, limit: 100 });
      await store().listUsers({ ...filter, afterPosition: 10, limit: 100 });
    });
    for (const plan of plans) {
      expect(plan, plan).toMatch(index);
      expect(plan).not.toMatch(/TEMP B-TREE|SCAN users/);
    }
  });
});
