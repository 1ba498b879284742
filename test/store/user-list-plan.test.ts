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

// ImportHumanUsers finds the users of a chunk by their external ids. users_external_id holds only the users that have
// one (most have none, and each index entry costs every new user); a lookup by external id implies that condition, so
// SQLite still reads those users through it.
describe("the users an import looks for by external id", () => {
  it("are read through the index of external ids, not a scan of the table", async () => {
    const plans = await plansOf("users", () => store().findUsersByNameKeysOrExternalIds({ instanceId: "i1", orgId: "o1", userNameKeys: [], externalIds: ["crm-1", "crm-2"] }));
    expect(plans.length).toBeGreaterThan(0);
    for (const plan of plans) {
      expect(plan, plan).toMatch(/SEARCH users USING INDEX users_external_id \(org_id=\? AND external_id=\?\)/);
      expect(plan).not.toMatch(/SCAN users/);
    }
  });
});
