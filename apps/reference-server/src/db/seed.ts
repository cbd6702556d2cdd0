import { principalKey } from "@svc/kernel";
import type { Kysely } from "kysely";
import { SERVICE_ISSUER } from "../security.js";
import type { Db } from "./database.js";
import type { LooseDb } from "./query.js";

const DEPARTMENTS = [
  { name: "Engineering", city: "Berlin" },
  { name: "Sales", city: "Paris" },
  { name: "Finance", city: "London" },
  { name: "Marketing", city: "Madrid" },
  { name: "Support", city: "Lisbon" },
];
const CITIES = ["Berlin", "Paris", "London", "Madrid", "Lisbon", "Vienna"];
/**
 * Sixty distinct full names, one per employee (managers first): pioneers of computing, so the demo
 * data reads naturally, and so that several share a first name (Alan, Grace, John, Jean, Kathleen) and sorting by the full name is visibly different from sorting by either part.
 */
const NAMES: ReadonlyArray<readonly [string, string]> = [
  ["Ada", "Lovelace"],
  ["Alan", "Turing"],
  ["Grace", "Hopper"],
  ["Linus", "Torvalds"],
  ["Barbara", "Liskov"],
  ["Ken", "Thompson"],
  ["Margaret", "Hamilton"],
  ["Dennis", "Ritchie"],
  ["Radia", "Perlman"],
  ["Tim", "Berners-Lee"],
  ["Frances", "Allen"],
  ["Edsger", "Dijkstra"],
  ["Alan", "Kay"],
  ["Donald", "Knuth"],
  ["John", "McCarthy"],
  ["Christine", "Darden"],
  ["Dorothy", "Vaughan"],
  ["Gladys", "West"],
  ["Annie", "Easley"],
  ["Hedy", "Lamarr"],
  ["Claude", "Shannon"],
  ["John", "Backus"],
  ["Niklaus", "Wirth"],
  ["Tony", "Hoare"],
  ["Leslie", "Lamport"],
  ["Bjarne", "Stroustrup"],
  ["Guido", "van Rossum"],
  ["James", "Gosling"],
  ["Anders", "Hejlsberg"],
  ["Brian", "Kernighan"],
  ["Jean", "Sammet"],
  ["Kathleen", "Booth"],
  ["Sophie", "Wilson"],
  ["Steve", "Furber"],
  ["Karen", "Sparck Jones"],
  ["Shafi", "Goldwasser"],
  ["Silvio", "Micali"],
  ["Whitfield", "Diffie"],
  ["Martin", "Hellman"],
  ["Adele", "Goldberg"],
  ["Alan", "Perlis"],
  ["Fran", "Bilas"],
  ["Betty", "Holberton"],
  ["Kathleen", "McNulty"],
  ["Marlyn", "Wescoff"],
  ["Ruth", "Lichterman"],
  ["Jean", "Bartik"],
  ["Evelyn", "Berezin"],
  ["Lynn", "Conway"],
  ["Carver", "Mead"],
  ["Vint", "Cerf"],
  ["Bob", "Kahn"],
  ["Elizabeth", "Feinler"],
  ["Grace", "Murray"],
  ["Lois", "Haibt"],
  ["Ivan", "Sutherland"],
  ["Douglas", "Engelbart"],
  ["Mary", "Allen Wilkes"],
  ["Clarence", "Ellis"],
  ["Mark", "Dean"],
];

const CATEGORIES = [
  { name: "Books", description: "Printed and electronic books" },
  { name: "Electronics", description: "Devices and accessories" },
  { name: "Office", description: "Office supplies" },
  { name: "Garden", description: "Tools and plants" },
];

/** Seeds a deterministic data set (money in cents, see db/money.ts), but only into an empty database (no departments yet). */
export async function seed(db: Db, now: Date = new Date()): Promise<boolean> {
  const k = db.kysely;
  const existing = await k.selectFrom("departments").select("id").limit(1).execute();
  if (existing.length > 0) return false;
  const at = now.toISOString();
  await k.transaction().execute(async (trx) => {
    const departments = await trx
      .insertInto("departments")
      .values(DEPARTMENTS)
      .returning(["id", "name"])
      .execute();
    // One manager per department first, so every other employee can point at one.
    const managers = [];
    for (const [i, d] of departments.entries()) {
      const [m] = await trx
        .insertInto("employees")
        .values({
          first_name: NAMES[i]?.[0] as string,
          last_name: NAMES[i]?.[1] as string,
          email: `manager.${d.name.toLowerCase()}@example.com`,
          department_id: d.id,
          city: DEPARTMENTS[i]?.city ?? "Berlin",
          salary: (90000 + i * 5000) * 100,
          manager_id: null,
          updated_at: at,
        })
        .returning("id")
        .execute();
      managers.push(m?.id ?? null);
    }
    const staff = [];
    for (let i = 0; i < 55; i++) {
      const d = i % departments.length;
      const [first, last] = NAMES[departments.length + i] as readonly [string, string];
      staff.push({
        first_name: first,
        last_name: last,
        email: `${first}.${last}@example.com`.toLowerCase().replace(/ /g, "-"),
        department_id: departments[d]?.id as number,
        city: CITIES[(i * 3) % CITIES.length] as string,
        salary: (40000 + ((i * 1733) % 50000)) * 100,
        manager_id: managers[d] ?? null,
        updated_at: at,
      });
    }
    await trx.insertInto("employees").values(staff).execute();
    const projects = await trx
      .insertInto("projects")
      .values(
        ["Apollo", "Borealis", "Cassini", "Dragonfly", "Europa", "Fermi"].map((name, i) => ({
          name,
          department_id: departments[i % departments.length]?.id as number,
          budget: (100000 + i * 25000) * 100,
          status: i % 3 === 2 ? "DONE" : "ACTIVE",
        })),
      )
      .returning("id")
      .execute();
    const assignments = [];
    for (let e = 1; e <= 30; e++) {
      const p = projects[e % projects.length];
      if (p) assignments.push({ employee_id: e, project_id: p.id, role: e % 4 === 0 ? "lead" : "member" });
    }
    await trx.insertInto("employee_projects").values(assignments).execute();
    const categories = await trx.insertInto("categories").values(CATEGORIES).returning("id").execute();
    const productRows = [];
    for (let i = 0; i < 16; i++) {
      productRows.push({
        name: `${["Handbook", "Cable", "Notebook", "Seeds"][i % 4]} ${i + 1}`,
        sku: `SKU-${String(1000 + i)}`,
        category_id: categories[i % categories.length]?.id as number,
        price: (5 + ((i * 7) % 40)) * 100 + 99,
        stock: 10 + i * 3,
        updated_at: at,
      });
    }
    const products = await trx
      .insertInto("products")
      .values(productRows)
      .returning(["id", "price"])
      .execute();
    const reviews = [];
    for (const [i, p] of products.entries()) {
      for (let r = 0; r < 2; r++) {
        reviews.push({
          product_id: p.id,
          author: ["ada", "alan", "grace"][(i + r) % 3] as string,
          rating: ((i + r) % 5) + 1,
          comment: r === 0 ? "Does what it says." : "Good value.",
          created_at: at,
        });
      }
    }
    await trx.insertInto("reviews").values(reviews).execute();
    const customers = await trx
      .insertInto("customers")
      .values(
        [
          "Acme Corp",
          "Globex",
          "Initech",
          "Umbrella",
          "Hooli",
          "Stark Industries",
          "Wayne Enterprises",
          "Tyrell",
        ].map((name, i) => ({
          name,
          email: `orders@${name.toLowerCase().replace(/[^a-z]/g, "")}.example`,
          city: CITIES[i % CITIES.length] as string,
        })),
      )
      .returning("id")
      .execute();
    await trx
      .insertInto("users")
      .values(
        ["alice", "bob", "carol", "dave", "erin"].map((username, i) => ({
          username,
          email: `${username}@example.com`,
          role: i === 0 ? "admin" : "customer",
          customer_id: customers[i % customers.length]?.id ?? null,
        })),
      )
      .execute();
    for (let i = 0; i < 16; i++) {
      const customer = customers[i % customers.length]?.id as number;
      const shipped = i % 2 === 1;
      const lines = [products[i % products.length], products[(i + 5) % products.length]].map((p, n) => ({
        product_id: p?.id as number,
        quantity: n + 1,
        unit_price: p?.price as number,
      }));
      const total = lines.reduce((s, l) => s + l.quantity * l.unit_price, 0);
      const [order] = await trx
        .insertInto("orders")
        .values({
          customer_id: customer,
          status: shipped ? "SHIPPED" : "PAID",
          total,
          currency: "EUR",
          carrier: shipped ? "DHL" : null,
          tracking_number: shipped ? `JD0146000${1000 + i}` : null,
          created_at: at,
          updated_at: at,
        })
        .returning("id")
        .execute();
      const orderId = order?.id as number;
      await trx
        .insertInto("order_items")
        .values(lines.map((l) => ({ ...l, order_id: orderId })))
        .execute();
      await trx
        .insertInto("payments")
        .values({ order_id: orderId, amount: total, method: i % 3 === 0 ? "card" : "sepa", created_at: at })
        .execute();
    }
    const accounts = await trx
      .insertInto("accounts")
      .values(
        ["alice", "bob", "carol", "dave", "erin", "treasury"].map((owner, i) => ({
          number: `DE89 3704 0044 0532 0130 ${String(i).padStart(2, "0")}`,
          owner,
          balance: (owner === "treasury" ? 1_000_000 : 1000 + i * 250) * 100,
          currency: "EUR",
          updated_at: at,
        })),
      )
      .returning("id")
      .execute();
    await trx
      .insertInto("transfers")
      .values({
        from_account_id: accounts[5]?.id as number,
        to_account_id: accounts[0]?.id as number,
        amount: 0,
        status: "COMPLETED",
        failure_reason: null,
        created_at: at,
        completed_at: at,
      })
      .execute();
    // A cart is kept under its owner's principal key (the service's own users: its issuer, then the id).
    const admin = principalKey({ id: "admin", issuer: SERVICE_ISSUER });
    await trx
      .insertInto("cart_items")
      .values([
        { owner: admin, product_id: products[0]?.id as number, quantity: 1 },
        { owner: admin, product_id: products[3]?.id as number, quantity: 2 },
      ])
      .execute();
    // What the SOAP one-way operations (logEvent, sendNotification) leave behind, so /events and
    // /notifications show their shape before a first call. (Their tables belong to the SOAP
    // services' migration, outside the typed schema.)
    const soapTables = trx as unknown as Kysely<LooseDb>;
    await soapTables
      .insertInto("events")
      .values([
        {
          type: "customer.sync",
          severity: "INFO",
          message: "Nightly customer import finished",
          occurred_at: at,
          customer_id: null,
          received_at: at,
          submitted_by: "admin",
        },
        {
          type: "customer.sync",
          severity: "WARN",
          message: "Customer without a confirmed e-mail address",
          occurred_at: at,
          customer_id: "3",
          received_at: at,
          submitted_by: "admin",
        },
      ])
      .execute();
    await soapTables
      .insertInto("notifications")
      .values([
        {
          message: "Welcome to the reference service",
          status: "QUEUED",
          queued_at: at,
          submitted_by: "admin",
        },
        { message: "Price list updated", status: "QUEUED", queued_at: at, submitted_by: "admin" },
      ])
      .execute();
  });
  return true;
}
