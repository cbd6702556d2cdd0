// Median Basic response time for a known user with a wrong password and for an unknown user,
// through authenticate() on a listening node:http server (loopback, one request at a time).
// Not a test: run it by hand after `npm run build -w @svc/auth`:
//   node packages/auth/bench/basic-timing.mjs [rounds]
// "before" is the stand-in of verifyPassword(password, undefined) without options (scrypt ln=15)
// next to users hashed at logN=12; "after" is one createPasswordHasher({ logN: 12 }) for both.
import { createServer } from "node:http";
import { authenticate, createPasswordHasher, verifyPassword } from "../dist/index.js";

const rounds = Number(process.argv[2] ?? 41);
const hasher = createPasswordHasher({ logN: 12 });
const stored = new Map([["alice", await hasher.hash("right")]]);

const variants = {
  before: (user, password) => verifyPassword(password, stored.get(user)),
  after: (user, password) => hasher.verify(password, stored.get(user)),
};

async function measure(name, check) {
  const mw = authenticate({
    realm: "bench",
    // Every request is a wrong password from one client: no budget, or the 11th would be a 429.
    basic: {
      cache: false,
      failureLimit: false,
      verify: async (u, p) => ((await check(u, p)) ? { id: u } : null),
    },
  });
  const server = createServer((req, res) =>
    mw(req, res, (err) => {
      res.statusCode = err ? err.status : 200;
      res.end();
    }),
  );
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const time = async (user) => {
    const authorization = `Basic ${Buffer.from(`${user}:wrong`).toString("base64")}`;
    const start = process.hrtime.bigint();
    const res = await fetch(url, { headers: { authorization } });
    await res.arrayBuffer();
    if (res.status !== 401) throw new Error(`expected 401, got ${res.status}`);
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  const known = [];
  const unknown = [];
  await time("alice"); // warm-up
  for (let i = 0; i < rounds; i++) {
    // Alternate which goes first, so neither always follows the other.
    if (i % 2 === 0) {
      known.push(await time("alice"));
      unknown.push(await time("nobody"));
    } else {
      unknown.push(await time("nobody"));
      known.push(await time("alice"));
    }
  }
  server.close();
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const k = median(known);
  const u = median(unknown);
  process.stdout.write(
    `${name}: known user, wrong password ${k.toFixed(1)} ms; unknown user ${u.toFixed(1)} ms; ` +
      `difference ${(((u - k) / k) * 100).toFixed(1)} % (median of ${rounds})\n`,
  );
}

for (const [name, check] of Object.entries(variants)) await measure(name, check);
