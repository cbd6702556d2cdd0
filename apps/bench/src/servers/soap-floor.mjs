// The floor of the SOAP scenarios: the request body read to its end, then the getCustomer
// response node-soap and @svc/soap-envelope produce, as bytes computed at start-up. On an
// Express 5 route (what both SOAP stacks are mounted on), or with BENCH_FLOOR=node on plain
// node:http. The difference to a SOAP scenario is what its SOAP layer costs.
import "./tick-shape.mjs";
import { createServer } from "node:http";
import express from "express";
import { benchPort, CUSTOMERS, exitOnSigterm } from "../fixtures.mjs";

const customer = CUSTOMERS.get(1);
const response = Buffer.from(
  '<?xml version="1.0" encoding="utf-8"?><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope">' +
    '<env:Body><GetCustomerResponse xmlns="http://svc.example.com/ws/customer/v1"><customer>' +
    `<id>${customer.id}</id><name>${customer.name}</name><email>${customer.email}</email>` +
    "</customer></GetCustomerResponse></env:Body></env:Envelope>",
);
const headers = {
  "Content-Type": "application/soap+xml; charset=utf-8",
  "Content-Length": String(response.length),
  "Cache-Control": "no-store",
};

function answer(req, res) {
  req.on("end", () => {
    res.writeHead(200, headers);
    res.end(response);
  });
  req.resume();
}

if (process.env.BENCH_FLOOR === "node") {
  createServer((req, res) => {
    if (req.method === "POST" && req.url === "/ws/customer") answer(req, res);
    else {
      req.resume();
      res.writeHead(req.url === "/ws/customer?wsdl" ? 200 : 404).end();
    }
  }).listen(benchPort(), "127.0.0.1");
} else {
  const app = express();
  app.post("/ws/customer", answer);
  app.get("/ws/customer", (_req, res) => res.status(200).end());
  app.listen(benchPort(), "127.0.0.1");
}
exitOnSigterm();
