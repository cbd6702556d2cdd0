// Scenario 2: a bare Express 5 route serialising the same object on every request
// (with Express's defaults, which include a weak ETag).
import "./tick-shape.mjs";
import express from "express";
import { EMPLOYEES, exitOnSigterm, listenApp } from "../fixtures.mjs";

const app = express();
app.get("/employees/:id", (req, res) => {
  const employee = EMPLOYEES.get(Number(req.params.id));
  if (!employee) {
    res.status(404).json({ status: 404, error: "Not Found" });
    return;
  }
  res.json(employee);
});
listenApp(app);
exitOnSigterm();
