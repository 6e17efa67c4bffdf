// A webhook receiver that verifies each request with the reference Standard
// Webhooks library, so receiver_test.go proves the Go sender's signatures
// hold across implementations.
//
//   node receiver.mjs [PORT] [SECRET]   (SECRET may come from WEBHOOK_SECRET)
//
// It listens on 127.0.0.1 (port 0 picks a free one), prints the port as its
// first line, then one JSON line per request:
// {"valid":true,"id":...,"type":...} or {"valid":false,"error":...}.
// Valid deliveries get 204, the rest 400.
import http from "node:http";
import { Webhook } from "standardwebhooks";

const [port = "0", secret = process.env.WEBHOOK_SECRET] = process.argv.slice(2);
if (!secret) {
  console.error("usage: node receiver.mjs [PORT] SECRET (or set WEBHOOK_SECRET)");
  process.exit(2);
}
const webhook = new Webhook(secret);

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    let line;
    try {
      // The signature covers the exact bytes sent, so verify the raw body.
      const event = webhook.verify(Buffer.concat(chunks).toString("utf8"), req.headers);
      line = { valid: true, id: event?.id, type: event?.type };
    } catch (err) {
      line = { valid: false, error: String(err?.message ?? err) };
    }
    // Print before answering: when the sender has its answer, the line is out.
    process.stdout.write(`${JSON.stringify(line)}\n`);
    res.writeHead(line.valid ? 204 : 400).end();
  });
});

server.listen(Number(port), "127.0.0.1", () => {
  process.stdout.write(`${server.address().port}\n`);
});
