// The MCP side of the wire format, as mppx 0.11.0's MCP client handles it:
// reads a challenge object (what a -32042 error carries in
// error.data.challenges) on stdin, with the secret in PAYMENT_SECRET, and
// prints {verified, credential}: whether Challenge.Schema accepts it and
// Challenge.verify accepts its id, and the credential object mppx's MCP
// transport puts in params._meta["org.paymentauth/credential"]
// (client/Transport.js: Credential.deserialize of the serialised
// credential), paid with the test method's client side.
import { Challenge, Credential } from 'mppx'
import { testClient } from './testmethod.mjs'

let input = ''
for await (const chunk of process.stdin) input += chunk
const challenge = Challenge.Schema.parse(JSON.parse(input))
const verified = Challenge.verify(challenge, { secretKey: process.env.PAYMENT_SECRET })
const serialized = await testClient().createCredential({ challenge })
const credential = Credential.deserialize(serialized)
console.log(JSON.stringify({ verified, credential }))
