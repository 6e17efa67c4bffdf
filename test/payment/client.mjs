// The reference client of the HTTP Payment scheme, mppx 0.11.0, against a
// server: node client.mjs <url> [post-body]
// with the server's challenge secret in PAYMENT_SECRET (not in argv, where
// ps shows it). It prints one JSON report on stdout:
//
//   challenge  the 402 without a credential: Challenge.fromResponse (mppx's
//              parser), Challenge.verify with the secret (mppx recomputes
//              the HMAC id), the problem+json body;
//   paid       Mppx.create({methods: [test client]}).fetch: 402 ->
//              credential -> the answer, Receipt.fromResponse of it;
//   replay     the paid credential sent again (must be refused, with a
//              fresh challenge mppx parses);
//   otherCall  the paid credential sent to PAYMENT_OTHER_URL, when set.
//
// It fails (exit 1, the error on stderr) when mppx throws.
import { Challenge, Receipt } from 'mppx'
import { Mppx } from 'mppx/client'
import { testClient } from './testmethod.mjs'

const [url, body] = process.argv.slice(2)
const secretKey = process.env.PAYMENT_SECRET
if (!url || !secretKey) {
  console.error('usage: PAYMENT_SECRET=… node client.mjs <url> [post-body]')
  process.exit(2)
}
const init = body === undefined ? {} : { method: 'POST', body, headers: { 'content-type': 'application/json' } }

async function problemOf(res) {
  const type = res.headers.get('content-type') ?? ''
  const text = await res.text()
  return { contentType: type, problem: type.startsWith('application/problem+json') ? JSON.parse(text) : text }
}

function describe(challenge) {
  return { ...challenge, verified: Challenge.verify(challenge, { secretKey }) }
}

const report = {}

// 1. The challenge, as mppx reads and verifies it.
{
  const res = await fetch(url, init)
  const out = { status: res.status, cacheControl: res.headers.get('cache-control') }
  if (res.status === 402) {
    out.challenge = describe(Challenge.fromResponse(res))
    out.challenges = Challenge.fromResponseList(res).length
  }
  Object.assign(out, await problemOf(res))
  report.challenge = out
}

// 2. Paying with Mppx.create(...).fetch and the test method.
let credential
{
  const mppx = Mppx.create({ methods: [testClient({ onCredential: (c) => { credential = c } })], polyfill: false })
  const res = await mppx.fetch(url, init)
  const out = { status: res.status }
  if (res.ok) {
    out.receipt = Receipt.fromResponse(res)
    out.body = await res.text()
  } else {
    Object.assign(out, await problemOf(res))
  }
  report.paid = out
}

// 3. The same credential again.
if (credential) {
  const res = await fetch(url, { ...init, headers: { ...(init.headers ?? {}), authorization: credential } })
  const out = { status: res.status }
  if (res.status === 402) out.challenge = describe(Challenge.fromResponse(res))
  Object.assign(out, await problemOf(res))
  report.replay = out
}

// 4. The same credential for another call (PAYMENT_OTHER_URL), e.g.
// another search: must be refused.
if (credential && process.env.PAYMENT_OTHER_URL) {
  const res = await fetch(process.env.PAYMENT_OTHER_URL, { headers: { authorization: credential } })
  const out = { status: res.status }
  if (res.status === 402) out.challenge = describe(Challenge.fromResponse(res))
  Object.assign(out, await problemOf(res))
  report.otherCall = out
}

console.log(JSON.stringify(report))
