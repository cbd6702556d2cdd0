import { hal, Rel } from "@svc/hal";
import { UNSUPPORTED_VERSION } from "@svc/kernel";
import { sql } from "kysely";
import { loose } from "../db/query.js";
import { EmployeeV1Input, EmployeeV2Input } from "../schemas.js";
import type { RequestView } from "../view.js";
import { cents, departmentId, eur, mustExist, rule } from "./catalogue.js";
import type { CrudResource } from "./crud.js";

/**
 * The employee representation version the request selected (spec part 9); 1 by default. The
 * service's versions are integers (`versions: [1, 2]`), which the pipeline decides as numbers; a
 * request naming a version the API lacks is refused before any handler runs.
 */
export function apiVersion(req: RequestView): number {
  const version = req.state.version;
  return version === undefined || version === UNSUPPORTED_VERSION ? 1 : Number(version);
}

/** Version 1's `name`: first and last name, as {@link employees}' view joins them. */
const FULL_NAME = sql<string>`trim(e.first_name || ' ' || e.last_name)`;

/** Version 1 has one `name`; writing it splits at the first space into first and last name. */
function splitName(name: string): { first_name: string; last_name: string } {
  const at = name.search(/\s/);
  return at === -1
    ? { first_name: name, last_name: "" }
    : { first_name: name.slice(0, at), last_name: name.slice(at).trim() };
}

export const employees: CrudResource = {
  path: "/employees",
  collection: "employees",
  noun: "Employee",
  table: "employees",
  // The employee with its department's name and its full name, as one derived table `t`, so the
  // full name can be filtered and sorted on like a column (version 1's `name` is what a client
  // sees: sorting and filtering use the same text).
  base: (db) =>
    loose(db)
      .selectFrom((eb) =>
        eb
          .selectFrom("employees as e")
          .innerJoin("departments as d", "d.id", "e.department_id")
          .selectAll("e")
          .select(["d.name as department", FULL_NAME.as("full_name")])
          .as("t"),
      )
      .selectAll("t"),
  list: {
    filters: {
      department: { column: "t.department", match: "eq" },
      city: { column: "t.city", match: "eq" },
      // Case-insensitive, on the full name: `?name=ada lovelace` finds Ada Lovelace.
      name: { column: "t.full_name", match: "contains" },
      firstName: { column: "t.first_name", match: "contains" },
      lastName: { column: "t.last_name", match: "contains" },
      email: { column: "t.email", match: "eq" },
      managerId: { column: "t.manager_id", match: "id" },
    },
    sort: {
      id: "t.id",
      name: "t.full_name",
      firstName: "t.first_name",
      lastName: "t.last_name",
      department: "t.department",
      city: "t.city",
      salary: "t.salary",
      email: "t.email",
    },
  },
  view: (r, { href, req }) => {
    // `/v2/...` when the client named the version in the path (links.ts), so links keep using that strategy.
    const self = href(`/employees/${r.id}`);
    const managerId = r.manager_id === null ? null : Number(r.manager_id);
    // Each version's members written out (no spread of shared ones): built on every response.
    const state =
      apiVersion(req) >= 2
        ? {
            id: Number(r.id),
            firstName: r.first_name,
            lastName: r.last_name,
            email: r.email,
            department: r.department,
            city: r.city,
            salary: eur(r.salary),
            managerId,
          }
        : {
            id: Number(r.id),
            name: `${r.first_name} ${r.last_name}`.trim(),
            email: r.email,
            department: r.department,
            city: r.city,
            salary: eur(r.salary),
            managerId,
          };
    // The links added one by one rather than through resourceView's record: no record to build
    // and walk on every response.
    const resource = hal(state)
      .link(Rel.SELF, self)
      .link(Rel.UPDATE, self)
      .link(Rel.DELETE, self)
      .link(Rel.DEPARTMENT, href(`/departments/${r.department_id}`));
    if (r.manager_id !== null) resource.link(Rel.MANAGER, href(`/employees/${r.manager_id}`));
    return resource.link("projects", href(`/employees/${r.id}/projects`)).toJSON();
  },
  input: ({ req }) => (apiVersion(req) >= 2 ? EmployeeV2Input : EmployeeV1Input),
  toRow: async (input, { db, req }) => {
    const row: Record<string, unknown> = { updated_at: new Date().toISOString() };
    if (typeof input.name === "string") Object.assign(row, splitName(input.name));
    if (typeof input.firstName === "string") row.first_name = input.firstName;
    if (typeof input.lastName === "string") row.last_name = input.lastName;
    if (typeof input.salary === "number") {
      if (!(input.salary > 0)) throw rule("salary", "must be positive");
      row.salary = cents(input.salary);
    }
    if (typeof input.department === "string") row.department_id = await departmentId(db, input.department);
    for (const field of ["email", "city"] as const)
      if (typeof input[field] === "string") row[field] = input[field];
    if (input.managerId !== undefined) {
      if (typeof input.managerId === "number") {
        if (String(input.managerId) === req.params.id)
          throw rule("managerId", "must not be the employee itself");
        await mustExist(db, "employees", input.managerId, "managerId");
        // The hierarchy is a tree: the new manager must not be managed, directly or through a
        // chain, by this employee, or "A manages B manages A" would loop forever upwards.
        const self = Number(req.params.id);
        const seen = new Set<number>();
        for (let at: number | null = input.managerId; at !== null && !seen.has(at); ) {
          if (at === self) throw rule("managerId", "must not be someone the employee manages");
          seen.add(at);
          const up = await db.kysely
            .selectFrom("employees")
            .select("manager_id")
            .where("id", "=", at)
            .executeTakeFirst();
          at = up?.manager_id == null ? null : Number(up.manager_id);
        }
      }
      row.manager_id = input.managerId;
    } else if (req.method === "PUT") {
      // PUT replaces the whole resource: an omitted manager is no manager.
      row.manager_id = null;
    }
    return row;
  },
};
