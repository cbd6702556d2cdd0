import { HttpError } from "@svc/errors";
import { Rel } from "@svc/hal";
import { reply } from "@svc/kernel";
import { commitKeyIn, writtenAt } from "../commit-key.js";
import { insertCustomer } from "../db/customers.js";
import { type Db, exactInteger } from "../db/database.js";
import { fromMinor, minorDigits, toMinor } from "../db/money.js";
import { loose } from "../db/query.js";
import { validate } from "../request.js";
import {
  AccountInput,
  CategoryInput,
  CustomerInput,
  DepartmentInput,
  ProductInput,
  ProjectInput,
  ReviewInput,
  UserInput,
} from "../schemas.js";
import type { RequestView } from "../view.js";
import { type CrudResource, type Ctx, resourceView } from "./crud.js";

/**
 * Catalogue data changes rarely: the client's cache may keep it for five minutes (spec 4.3 rule
 * 5). `private`, not `public`: every request carries credentials, and RFC 9111 §3.5 lets a shared
 * cache reuse a response to an authenticated request only when it says `public` (or `s-maxage`,
 * `must-revalidate`), which would let a proxy serve the catalogue to clients without any.
 */
export const CATALOGUE_CACHE = "private, max-age=300";
/** Balances and transfers change all the time and are private: never stored (spec 4.3 rule 5). */
export const NO_STORE = "no-store";

/** A business rule broken by a well-formed request: 422 with the field at fault. */
export function rule(field: string, message: string): HttpError {
  return HttpError.unprocessable(`${field} ${message}`, { errors: [{ field, message }] });
}

/** The id of the department with this name, or a 422. */
export async function departmentId(db: Db, name: string): Promise<number> {
  const row = await db.kysely
    .selectFrom("departments")
    .select("id")
    .where("name", "=", name)
    .executeTakeFirst();
  if (!row) throw rule("department", `"${name}" is not an existing department`);
  return row.id;
}

/** 422 unless `table` holds a row with this id. */
export async function mustExist(db: Db, table: string, id: number, field: string): Promise<void> {
  const row = await loose(db).selectFrom(table).select("id").where("id", "=", id).executeTakeFirst();
  if (!row) throw rule(field, `${id} does not exist`);
}

const num = (v: unknown) => Number(v);
/** A money column (integer cents) as the EUR amount JSON carries. */
export const eur = (minor: unknown) => fromMinor(minor, 2);
/**
 * A EUR amount the schema accepted (at most two decimals, at most 10^12) as integer cents.
 * @example cents(12.3) // 1230
 */
export function cents(amount: number): number {
  const minor = toMinor(amount, 2);
  if (minor === undefined) throw rule("amount", "must have at most 2 decimal places");
  return minor;
}

export const departments: CrudResource = {
  path: "/departments",
  collection: "departments",
  noun: "Department",
  table: "departments",
  base: (db) => loose(db).selectFrom("departments as t").selectAll("t"),
  list: {
    filters: { name: { column: "t.name", match: "contains" }, city: { column: "t.city", match: "eq" } },
    sort: { id: "t.id", name: "t.name", city: "t.city" },
  },
  view: (r, { href }) =>
    resourceView({ id: num(r.id), name: r.name, city: r.city }, href(`/departments/${r.id}`), {
      employees: href(`/employees?department=${encodeURIComponent(String(r.name))}`),
    }),
  input: () => DepartmentInput,
  toRow: async (input) => ({ ...input }),
  cacheControl: CATALOGUE_CACHE,
};

export const projects: CrudResource = {
  path: "/projects",
  collection: "projects",
  noun: "Project",
  table: "projects",
  base: (db) =>
    loose(db)
      .selectFrom("projects as t")
      .innerJoin("departments as d", "d.id", "t.department_id")
      .selectAll("t")
      .select("d.name as department"),
  list: {
    filters: {
      name: { column: "t.name", match: "contains" },
      department: { column: "d.name", match: "eq" },
      status: { column: "t.status", match: "eq" },
    },
    sort: { id: "t.id", name: "t.name", budget: "t.budget", status: "t.status" },
  },
  view: (r, { href }) =>
    resourceView(
      { id: num(r.id), name: r.name, department: r.department, budget: eur(r.budget), status: r.status },
      href(`/projects/${r.id}`),
      { [Rel.DEPARTMENT]: href(`/departments/${r.department_id}`) },
    ),
  input: () => ProjectInput,
  toRow: async (input, { db }) => {
    const row: Record<string, unknown> = { ...input };
    if (typeof input.budget === "number") {
      if (input.budget < 0) throw rule("budget", "must not be negative");
      row.budget = cents(input.budget);
    }
    if (typeof input.department === "string") row.department_id = await departmentId(db, input.department);
    delete row.department;
    return row;
  },
};

export const categories: CrudResource = {
  path: "/categories",
  collection: "categories",
  noun: "Category",
  table: "categories",
  base: (db) => loose(db).selectFrom("categories as t").selectAll("t"),
  list: { filters: { name: { column: "t.name", match: "contains" } }, sort: { id: "t.id", name: "t.name" } },
  view: (r, { href }) =>
    resourceView({ id: num(r.id), name: r.name, description: r.description }, href(`/categories/${r.id}`), {
      products: href(`/products?categoryId=${r.id}`),
    }),
  input: () => CategoryInput,
  toRow: async (input) => ({ ...input }),
  cacheControl: CATALOGUE_CACHE,
};

export const products: CrudResource = {
  path: "/products",
  collection: "products",
  noun: "Product",
  table: "products",
  base: (db) =>
    loose(db)
      .selectFrom("products as t")
      .innerJoin("categories as c", "c.id", "t.category_id")
      .selectAll("t")
      .select("c.name as category"),
  list: {
    filters: {
      name: { column: "t.name", match: "contains" },
      category: { column: "c.name", match: "eq" },
      categoryId: { column: "t.category_id", match: "id" },
      sku: { column: "t.sku", match: "eq" },
    },
    sort: { id: "t.id", name: "t.name", price: "t.price", stock: "t.stock", sku: "t.sku" },
  },
  view: (r, { href }) =>
    resourceView(
      {
        id: num(r.id),
        name: r.name,
        sku: r.sku,
        categoryId: num(r.category_id),
        category: r.category,
        price: eur(r.price),
        stock: num(r.stock),
      },
      href(`/products/${r.id}`),
      { category: href(`/categories/${r.category_id}`), reviews: href(`/products/${r.id}/reviews`) },
    ),
  input: () => ProductInput,
  toRow: async (input, { db }) => {
    if (typeof input.price === "number" && input.price <= 0) throw rule("price", "must be positive");
    if (typeof input.stock === "number" && input.stock < 0) throw rule("stock", "must not be negative");
    if (typeof input.categoryId === "number")
      await mustExist(db, "categories", input.categoryId, "categoryId");
    const { categoryId, ...rest } = input;
    if (typeof input.price === "number") rest.price = cents(input.price);
    return {
      ...rest,
      ...(categoryId === undefined ? {} : { category_id: categoryId }),
      updated_at: new Date().toISOString(),
    };
  },
  cacheControl: CATALOGUE_CACHE,
};

export const reviews: CrudResource = {
  path: "/products/:parentId/reviews",
  collection: "reviews",
  noun: "Review",
  table: "reviews",
  parent: { table: "products", noun: "Product" },
  base: (db, ctx) =>
    loose(db).selectFrom("reviews as t").selectAll("t").where("t.product_id", "=", ctx.parentId),
  list: {
    filters: { rating: { column: "t.rating", match: "int" }, author: { column: "t.author", match: "eq" } },
    sort: { id: "t.id", rating: "t.rating", createdAt: "t.created_at" },
  },
  view: (r, { href }) =>
    resourceView(
      {
        id: num(r.id),
        productId: num(r.product_id),
        author: r.author,
        rating: num(r.rating),
        comment: r.comment,
        createdAt: r.created_at,
      },
      href(`/products/${r.product_id}/reviews/${r.id}`),
      { product: href(`/products/${r.product_id}`) },
    ),
  input: () => ReviewInput,
  toRow: async (input) => ({ ...input, created_at: new Date().toISOString() }),
  writes: ["POST", "DELETE"],
  cacheControl: CATALOGUE_CACHE,
};

export const customers: CrudResource = {
  path: "/customers",
  collection: "customers",
  noun: "Customer",
  table: "customers",
  base: (db) => loose(db).selectFrom("customers as t").selectAll("t"),
  list: {
    filters: {
      name: { column: "t.name", match: "contains" },
      city: { column: "t.city", match: "eq" },
      email: { column: "t.email", match: "eq" },
    },
    sort: { id: "t.id", name: "t.name", city: "t.city" },
  },
  // The id is 64-bit (SOAP clients may choose any xs:long): a number, or a BigInt past 2^53 that
  // the JSON representation writes with every digit.
  view: (r, { href }) =>
    resourceView({ id: r.id, name: r.name, email: r.email, city: r.city }, href(`/customers/${r.id}`), {
      orders: href(`/customers/${r.id}/orders`),
    }),
  input: () => CustomerInput,
  toRow: async (input) => ({ ...input }),
  handlers: { POST: createCustomer },
};

/**
 * `POST /customers`: the id comes from the service's allocator, which skips the ids SOAP clients
 * chose (db/customers.ts), never from the table's sequence.
 */
async function createCustomer(req: RequestView, ctx: Ctx) {
  const input = validate(CustomerInput, req.body);
  const result = await insertCustomer(ctx.db, input, (trx, id) =>
    commitKeyIn(trx, ctx.context?.claim, writtenAt(201, ctx.href(`/customers/${id}`))),
  );
  if (result.outcome !== "created") {
    throw HttpError.conflict("A resource with the same unique value already exists");
  }
  return reply(await ctx.show(exactInteger(result.id)), {
    status: 201,
    headers: { Location: ctx.href(`/customers/${result.id}`) },
  });
}

export const users: CrudResource = {
  path: "/users",
  collection: "users",
  noun: "User",
  table: "users",
  base: (db) => loose(db).selectFrom("users as t").selectAll("t"),
  list: {
    filters: {
      username: { column: "t.username", match: "contains" },
      role: { column: "t.role", match: "eq" },
    },
    sort: { id: "t.id", username: "t.username" },
  },
  view: (r, { href }) =>
    resourceView(
      {
        id: num(r.id),
        username: r.username,
        email: r.email,
        role: r.role,
        customerId: r.customer_id ?? null,
      },
      href(`/users/${r.id}`),
      {
        orders: href(`/users/${r.id}/orders`),
        customer: r.customer_id === null ? undefined : href(`/customers/${r.customer_id}`),
      },
    ),
  input: () => UserInput,
  toRow: async (input, { db, req }) => {
    if (typeof input.customerId === "number")
      await mustExist(db, "customers", input.customerId, "customerId");
    const { customerId, ...rest } = input;
    // PUT replaces the whole resource (RFC 9110 §9.3.4): an omitted customer is no customer.
    // PATCH changes only what it names.
    if (customerId === undefined) return req.method === "PUT" ? { ...rest, customer_id: null } : rest;
    return { ...rest, customer_id: customerId };
  },
};

export const accounts: CrudResource = {
  path: "/accounts",
  collection: "accounts",
  noun: "Account",
  table: "accounts",
  base: (db) => loose(db).selectFrom("accounts as t").selectAll("t"),
  list: {
    filters: { owner: { column: "t.owner", match: "eq" }, currency: { column: "t.currency", match: "eq" } },
    sort: { id: "t.id", owner: "t.owner", balance: "t.balance" },
  },
  view: (r, { href }) =>
    resourceView(
      {
        id: num(r.id),
        number: r.number,
        owner: r.owner,
        balance: fromMinor(r.balance, minorDigits(String(r.currency))),
        currency: r.currency,
        updatedAt: r.updated_at,
      },
      href(`/accounts/${r.id}`),
    ),
  input: () => AccountInput,
  toRow: async (input) => {
    // The balance moves only through transfers; it is set once, when the account is opened.
    const digits = minorDigits(String(input.currency));
    let balance = 0;
    if (typeof input.balance === "number") {
      if (input.balance < 0) throw rule("balance", "must not be negative");
      const minor = toMinor(input.balance, digits);
      if (minor === undefined)
        throw rule("balance", `must have at most ${digits} decimal places in ${input.currency}`);
      balance = minor;
    }
    return { ...input, balance, updated_at: new Date().toISOString() };
  },
  writes: ["POST", "DELETE"],
  cacheControl: NO_STORE,
};
