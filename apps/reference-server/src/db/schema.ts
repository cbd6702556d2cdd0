import type { Generated } from "kysely";

/**
 * The tables, as Kysely sees them. Money columns (salary, budget, price, total, unit_price,
 * amount, balance) hold integer minor units of their currency (cents for EUR; see db/money.ts).
 * Ids are 64-bit: read back as a number while exact, as a BigInt beyond 2^53 (db/database.ts).
 */
export interface Database {
  departments: { id: Generated<number>; name: string; city: string };
  employees: {
    id: Generated<number>;
    first_name: string;
    last_name: string;
    email: string;
    department_id: number;
    city: string;
    salary: number;
    manager_id: number | null;
    updated_at: string;
  };
  projects: { id: Generated<number>; name: string; department_id: number; budget: number; status: string };
  employee_projects: { employee_id: number; project_id: number; role: string };
  categories: { id: Generated<number>; name: string; description: string };
  products: {
    id: Generated<number>;
    name: string;
    sku: string;
    category_id: number;
    price: number;
    stock: number;
    updated_at: string;
  };
  reviews: {
    id: Generated<number>;
    product_id: number;
    author: string;
    rating: number;
    comment: string;
    created_at: string;
  };
  customers: { id: Generated<number | bigint>; name: string; email: string; city: string };
  users: {
    id: Generated<number>;
    username: string;
    email: string;
    role: string;
    customer_id: number | bigint | null;
  };
  orders: {
    id: Generated<number>;
    customer_id: number | bigint;
    status: string;
    total: number;
    currency: string;
    carrier: string | null;
    tracking_number: string | null;
    created_at: string;
    updated_at: string;
  };
  order_items: {
    id: Generated<number>;
    order_id: number;
    product_id: number;
    quantity: number;
    unit_price: number;
  };
  payments: {
    id: Generated<number>;
    order_id: number;
    amount: number;
    method: string;
    created_at: string;
  };
  cart_items: { id: Generated<number>; owner: string; product_id: number; quantity: number };
  accounts: {
    id: Generated<number>;
    number: string;
    owner: string;
    balance: number;
    currency: string;
    updated_at: string;
  };
  transfers: {
    id: Generated<number>;
    from_account_id: number;
    to_account_id: number;
    amount: number;
    status: string;
    failure_reason: string | null;
    created_at: string;
    completed_at: string | null;
  };
  /** The next id the service assigns in a table whose ids clients may also choose (customers). */
  id_allocations: { name: string; next_id: number | bigint };
}
