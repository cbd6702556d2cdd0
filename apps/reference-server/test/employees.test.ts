import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, client, type Started } from "./harness.js";

interface Page {
  _embedded: { employees: Array<Record<string, unknown>> };
  page: { number: number; size: number; totalElements: number; totalPages: number };
  _links: Record<string, { href: string }>;
}

const valid = {
  name: "Katherine Johnson",
  email: "katherine.johnson@example.com",
  department: "Engineering",
  city: "Berlin",
  salary: 85000,
};

describe.each(backends)("employees on $name", (backend) => {
  let s: Started;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    s = await backend.start();
    api = client(s.url);
  });
  afterAll(() => s.stop());

  it("GET /employees → 200, a page of 20 of at least 50 employees with paging links", async () => {
    const res = await api("/employees");
    expect(res.status).toBe(200);
    const page = (await res.json()) as Page;
    expect(page._embedded.employees).toHaveLength(20);
    expect(page.page).toMatchObject({ number: 1, size: 20 });
    expect(page.page.totalElements).toBeGreaterThanOrEqual(50);
    expect(Object.keys(page._links).sort()).toEqual(["first", "last", "next", "self"]);
    expect(page._embedded.employees[0]?._links).toHaveProperty("self");
  });

  it("GET /employees?page=2&size=5&sort=salary,desc&department=Sales → filtered, sorted page with kept parameters", async () => {
    const res = await api("/employees?page=2&size=5&sort=salary,desc&department=Sales");
    expect(res.status).toBe(200);
    const page = (await res.json()) as Page;
    const items = page._embedded.employees;
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((e) => e.department === "Sales")).toBe(true);
    const salaries = items.map((e) => e.salary as number);
    expect([...salaries].sort((a, b) => b - a)).toEqual(salaries);
    expect(page._links.previous?.href).toContain("department=Sales");
    expect(page._links.previous?.href).toContain("sort=salary,desc");
    expect(page._links.previous?.href).toContain("page=1");
  });

  it("GET /employees?city=Paris&name=<part> → filters combined with &", async () => {
    const paris = (await (await api("/employees?city=Paris&size=100")).json()) as Page;
    const all = (await (await api("/employees?size=100")).json()) as Page;
    const part = String(paris._embedded.employees[0]?.name).split(" ")[0]?.slice(1, 4).toUpperCase() ?? "";
    const page = (await (await api(`/employees?city=Paris&name=${part}`)).json()) as Page;
    expect(page._embedded.employees.length).toBeGreaterThan(0);
    expect(page.page.totalElements).toBeLessThan(all.page.totalElements);
    for (const e of page._embedded.employees) {
      expect(e.city).toBe("Paris");
      expect(String(e.name).toLowerCase()).toContain(part.toLowerCase());
    }
  });

  it.each([
    ["size=0", "size"],
    ["size=101", "size"],
    ["page=0", "page"],
    ["page=abc", "page"],
    ["sort=password", "sort"],
    ["sort=salary,sideways", "sort"],
    ["colour=blue", "colour"],
    ["department=Sales&department=IT", "department"],
  ])("GET /employees?%s → 400 naming %s", async (query, field) => {
    const res = await api(`/employees?${query}`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { status: number; errors?: Array<{ field: string }>; path: string };
    expect(body.status).toBe(400);
    expect(body.path).toBe("/employees");
    expect(body.errors?.map((e) => e.field)).toContain(field);
  });

  it("GET /employees/1 → 200 with self, department links", async () => {
    const res = await api("/employees/1");
    expect(res.status).toBe(200);
    const e = (await res.json()) as Record<string, unknown> & { _links: Record<string, { href: string }> };
    expect(e).toMatchObject({ id: 1, department: "Engineering" });
    expect(e._links.self?.href).toBe(`${s.url}/employees/1`);
    expect(e._links.department?.href).toBe(`${s.url}/departments/1`);
  });

  it.each(["99999", "abc", "0", "-1"])("GET /employees/%s → 404 error record", async (id) => {
    const res = await api(`/employees/${id}`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["error", "message", "path", "status", "timestamp"]);
    expect(body.error).toBe("Not Found");
  });

  it("POST /employees → 201 with Location of the new employee, then GET it", async () => {
    const res = await api("/employees", { method: "POST", json: valid });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { id: number; name: string };
    expect(created.name).toBe("Katherine Johnson");
    expect(res.headers.get("location")).toBe(`${s.url}/employees/${created.id}`);
    const again = await api(`/employees/${created.id}`);
    expect(again.status).toBe(200);
  });

  it("POST /employees with the same email → 409", async () => {
    const res = await api("/employees", { method: "POST", json: { ...valid, name: "Someone Else" } });
    expect(res.status).toBe(409);
  });

  it("POST /employees with missing and mistyped fields → 400 with field errors", async () => {
    const res = await api("/employees", { method: "POST", json: { name: 42, department: "Sales" } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: Array<{ field: string; message: string }> };
    const fields = body.errors.map((e) => e.field);
    expect(fields).toEqual(expect.arrayContaining(["name", "email", "city", "salary"]));
  });

  it("POST /employees with malformed JSON → 400", async () => {
    const res = await api("/employees", {
      method: "POST",
      body: "{ not json",
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
  });

  it.each([
    [{ salary: -5 }, "salary"],
    [{ salary: 0 }, "salary"],
    [{ department: "Astrology" }, "department"],
    [{ managerId: 99999 }, "managerId"],
  ])("POST /employees with %j → 422 (business rule)", async (change, field) => {
    const res = await api("/employees", {
      method: "POST",
      json: { ...valid, email: `x${Math.random()}@example.com`, ...change },
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { errors: Array<{ field: string }> };
    expect(body.errors[0]?.field).toBe(field);
  });

  it("PUT /employees/2 with the whole object → 200 and replaced", async () => {
    const res = await api("/employees/2", {
      method: "PUT",
      json: { ...valid, email: "replaced@example.com", name: "Replaced Person", salary: 70000 },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: 2,
      name: "Replaced Person",
      salary: 70000,
      managerId: null,
    });
  });

  it('an employee version 1 named with one word reads in version 2 with lastName "", and that representation PUTs back → 200', async () => {
    const created = await api("/employees", {
      method: "POST",
      json: { ...valid, email: "plato@example.com", name: "Plato" },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    const v2 = (await (await api(`/v2/employees/${id}`)).json()) as Record<string, unknown>;
    expect(v2).toMatchObject({ firstName: "Plato", lastName: "" });
    // Spec part 9: existing versions stay compatible; a version 2 client's read-modify-write works.
    const { _links, ...state } = v2;
    const put = await api(`/v2/employees/${id}`, { method: "PUT", json: { ...state, city: "Athens" } });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ firstName: "Plato", lastName: "", city: "Athens" });
    expect(await (await api(`/employees/${id}`)).json()).toMatchObject({ name: "Plato" });
  });

  it("PUT /employees/2 with only one field → 400 (PUT needs the whole object)", async () => {
    const res = await api("/employees/2", { method: "PUT", json: { salary: 1 } });
    expect(res.status).toBe(400);
  });

  it("PATCH /employees/3 {salary} → 200, only the salary changes", async () => {
    const before = (await (await api("/employees/3")).json()) as Record<string, unknown>;
    const res = await api("/employees/3", { method: "PATCH", json: { salary: 123456 } });
    expect(res.status).toBe(200);
    const after = (await res.json()) as Record<string, unknown>;
    expect(after).toEqual({ ...before, salary: 123456 });
  });

  it("PATCH /employees/3 {} → 400; {salary:-1} → 422; {salary:'x'} → 400", async () => {
    expect((await api("/employees/3", { method: "PATCH", json: {} })).status).toBe(400);
    expect((await api("/employees/3", { method: "PATCH", json: { salary: -1 } })).status).toBe(422);
    expect((await api("/employees/3", { method: "PATCH", json: { salary: "x" } })).status).toBe(400);
  });

  it("DELETE /employees/{id} → 204 empty; again → 404; GET → 404", async () => {
    const created = (await (
      await api("/employees", { method: "POST", json: { ...valid, email: "temp@example.com" } })
    ).json()) as { id: number };
    const res = await api(`/employees/${created.id}`, { method: "DELETE" });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect((await api(`/employees/${created.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await api(`/employees/${created.id}`)).status).toBe(404);
  });

  it("HEAD /employees → the GET headers, no body", async () => {
    const identity = { "accept-encoding": "identity" };
    const head = await api("/employees", { method: "HEAD", headers: identity });
    const get = await api("/employees", { headers: identity });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    expect(head.headers.get("content-type")).toBe(get.headers.get("content-type"));
    expect(head.headers.get("content-length")).toBe(get.headers.get("content-length"));
  });

  it("OPTIONS names the write media types: Accept-Post on collections, Accept-Patch on items (RFC 5789 §3.1)", async () => {
    const collection = await api("/employees", { method: "OPTIONS" });
    expect(collection.headers.get("accept-post")).toBe("application/json");
    expect(collection.headers.get("accept-patch")).toBeNull();
    const item = await api("/employees/1", { method: "OPTIONS" });
    expect(item.headers.get("accept-patch")).toBe("application/json");
    expect(item.headers.get("accept-post")).toBeNull();
    // Read-only collections accept no writes, so they name no media type for them.
    const events = await api("/events", { method: "OPTIONS" });
    expect(events.status).toBe(204);
    expect(events.headers.get("accept-post")).toBeNull();
  });

  it("OPTIONS /employees → Allow listing the methods", async () => {
    const res = await api("/employees", { method: "OPTIONS" });
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")?.split(", ").sort()).toEqual(["GET", "HEAD", "OPTIONS", "POST"]);
  });

  it("DELETE /employees (the collection) → 405 with Allow", async () => {
    const res = await api("/employees", { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toContain("POST");
  });
});
