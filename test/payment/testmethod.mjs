// The client side of test/payment/testmethod (Go): an mppx client method
// named "test" (intent "charge") whose credential echoes the challenge's
// request and names a fresh payment reference. It moves no money; servers
// accept it only in tests.
import { randomUUID } from 'node:crypto'
import { Credential, Method, z } from 'mppx'

export const testCharge = Method.from({
  name: 'test',
  intent: 'charge',
  schema: {
    credential: {
      payload: z.object({
        reference: z.string(),
        amount: z.string(),
        currency: z.string(),
        recipient: z.string(),
        externalId: z.string(),
        outcome: z.optional(z.string()),
      }),
    },
    request: z.object({
      amount: z.amount(),
      currency: z.string(),
      recipient: z.string(),
      externalId: z.string(),
      description: z.optional(z.string()),
    }),
  },
})

// testClient returns the client method; outcome ("refuse", "outage")
// asks the server's test method for that result instead of a payment.
export function testClient({ outcome, onCredential } = {}) {
  return Method.toClient(testCharge, {
    async createCredential({ challenge }) {
      const { amount, currency, recipient, externalId } = challenge.request
      const credential = Credential.serialize({
        challenge,
        payload: { reference: `test-${randomUUID()}`, amount, currency, recipient, externalId, ...(outcome && { outcome }) },
        source: 'test:anonymous-agent',
      })
      onCredential?.(credential)
      return credential
    },
  })
}
