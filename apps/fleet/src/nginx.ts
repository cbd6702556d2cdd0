import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "@svc/test-utils";
import { call } from "./http.js";

/** The address nginx connects to the instances from; the instances trust only this one (`TRUST_PROXY`). */
export const PROXY_ADDRESS = "127.0.0.2";

function which(command: string): string | undefined {
  for (const dir of [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/usr/local/sbin", "/sbin"]) {
    if (dir && existsSync(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

/** The nginx and openssl binaries (`NGINX` may name nginx's), or what is missing. */
export function proxyTools(): { nginx: string; openssl: string } | { missing: string[] } {
  const nginx = process.env.NGINX || which("nginx");
  const openssl = which("openssl");
  if (nginx && openssl) return { nginx, openssl };
  return { missing: [...(nginx ? [] : ["nginx"]), ...(openssl ? [] : ["openssl"])] };
}

/**
 * Whether the fleet suites can run here. In CI (`CI` set) a missing tool is an error, so the
 * suites never pass by skipping there; elsewhere they are skipped with a visible message.
 */
export function proxyAvailable(): boolean {
  const tools = proxyTools();
  if (!("missing" in tools)) return true;
  const message = `${tools.missing.join(" and ")} not found (Debian: apt-get install nginx-light openssl)`;
  if (process.env.CI) throw new Error(`${message}: the fleet suites need it in CI`);
  console.warn(`[skip] ${message}: skipping the fleet suites`);
  return false;
}

/** A running nginx in front of the fleet. */
export interface Nginx {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `https://localhost:<port>`: TLS ends at nginx, which tells the instances with `X-Forwarded-Proto`. */
  httpsUrl: string;
  /** The PEM certificate of `httpsUrl` (self-signed for localhost and 127.0.0.1). */
  ca: string;
  /** nginx's error log, for diagnostics. */
  errorLog(): string;
  stop(): Promise<void>;
}

/**
 * Starts nginx as a child process (`daemon off`, master + one worker) with every path (config,
 * pid, logs, temp files, certificate) inside `dir`. Round-robin over `upstreams`, HTTP/1.1
 * keep-alive to them, connections from {@link PROXY_ADDRESS}, and the `X-Forwarded-*` headers set
 * from what nginx itself saw, so a client cannot choose them.
 */
export async function startProxy(dir: string, upstreams: readonly number[]): Promise<Nginx> {
  const tools = proxyTools();
  if ("missing" in tools) throw new Error(`${tools.missing.join(" and ")} not found`);
  const cert = join(dir, "proxy.crt");
  const key = join(dir, "proxy.key");
  execFileSync(
    tools.openssl,
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "2",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "-keyout",
      key,
      "-out",
      cert,
    ],
    { stdio: "ignore" },
  );
  const port = await freePort();
  const tlsPort = await freePort();
  const conf = join(dir, "nginx.conf");
  // nginx started by root hands the workers to "nobody" by default, who cannot use this 0700 dir.
  const asRoot = process.getuid?.() === 0 ? "user root root;\n" : "";
  writeFileSync(
    conf,
    `${asRoot}worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy_temp;
  fastcgi_temp_path ${dir}/fastcgi_temp;
  uwsgi_temp_path ${dir}/uwsgi_temp;
  scgi_temp_path ${dir}/scgi_temp;
  client_max_body_size 1m;
  # A client that stalls its headers or body is dropped after 5 s (nginx's default is 60 s); nginx
  # buffers request bodies, so a slow body never ties up an instance.
  client_header_timeout 5s;
  client_body_timeout 5s;
  upstream fleet {
${upstreams.map((p) => `    server 127.0.0.1:${p} max_fails=0;`).join("\n")}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${port};
    listen 127.0.0.1:${tlsPort} ssl;
    server_name localhost;
    ssl_certificate ${cert};
    ssl_certificate_key ${key};
    location / {
      proxy_pass http://fleet;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_bind ${PROXY_ADDRESS};
      proxy_buffering off;
    }
  }
}
`,
  );
  const child: ChildProcess = spawn(tools.nginx, ["-p", dir, "-c", conf, "-g", "daemon off;"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString("utf8");
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let running = true;
  void exited.then(() => {
    running = false;
  });
  const errorLog = () => {
    const file = join(dir, "error.log");
    return stderr + (existsSync(file) ? readFileSync(file, "utf8") : "");
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (!running) throw new Error(`nginx exited at start:\n${errorLog()}`);
    try {
      await call(`${url}/health`, { timeoutMs: 1000 });
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`nginx did not answer within 10 s:\n${errorLog()}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url,
    httpsUrl: `https://localhost:${tlsPort}`,
    ca: readFileSync(cert, "utf8"),
    errorLog,
    async stop() {
      if (!running) return;
      // SIGTERM is nginx's fast shutdown (master and worker); SIGKILL after two seconds in case it hangs.
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
      await exited;
      clearTimeout(timer);
    },
  };
}
