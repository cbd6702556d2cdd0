// Cost of rendering one HAL page (20 employees, 3 links each, page links) with @svc/hal against
// halson, and of RFC 6570 expansion. Pure CPU: no server, so the figures compare the builders.
// Run: npx vitest bench --run --project @svc/hal
import halson from "halson";
import { bench, describe } from "vitest";
import { expandTemplate, hal, pageModel, Rel } from "../src/index.js";

const employees = Array.from({ length: 20 }, (_, i) => ({
  id: i + 1,
  name: `Employee ${i + 1}`,
  department: "IT",
}));
const origin = "https://api.example.com";

describe("render a page of 20 HAL employees", () => {
  bench("@svc/hal (hal + pageModel)", () => {
    const items = employees.map((e) =>
      hal(e)
        .link(Rel.SELF, `${origin}/employees/${e.id}`)
        .link(Rel.DEPARTMENT, `${origin}/departments/${e.department}`)
        .link(Rel.MANAGER, `${origin}/employees/1`),
    );
    JSON.stringify(
      pageModel({
        collection: "employees",
        items,
        page: 2,
        size: 20,
        totalElements: 95,
        url: "/employees?page=2&size=20&sort=name",
        origin,
      }),
    );
  });

  bench("halson", () => {
    const page = halson({ page: { number: 2, size: 20, totalElements: 95, totalPages: 5 } })
      .addLink("self", `${origin}/employees?page=2&size=20&sort=name`)
      .addLink("first", `${origin}/employees?page=1&size=20&sort=name`)
      .addLink("previous", `${origin}/employees?page=1&size=20&sort=name`)
      .addLink("next", `${origin}/employees?page=3&size=20&sort=name`)
      .addLink("last", `${origin}/employees?page=5&size=20&sort=name`);
    page.addEmbed(
      "employees",
      employees.map((e) =>
        halson(e)
          .addLink("self", `${origin}/employees/${e.id}`)
          .addLink("department", `${origin}/departments/${e.department}`)
          .addLink("manager", `${origin}/employees/1`),
      ),
    );
    JSON.stringify(page);
  });
});

describe("RFC 6570 expansion", () => {
  bench("expandTemplate /employees{?page,size,sort,department}", () => {
    expandTemplate("/employees{?page,size,sort,department}", {
      page: 2,
      size: 20,
      sort: "name",
      department: "IT",
    });
  });
});
