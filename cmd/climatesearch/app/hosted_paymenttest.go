//go:build hosted && paymenttest

package app

import "github.com/climatesearch/climatesearch/test/payment/testmethod"

// The test payment method (it moves no money) in a binary built for the
// payment tests only: go build -tags hosted,paymenttest. SERVICE_PAYMENT_METHOD=test
// then makes challenges ask for it.
func init() { testMethods = append(testMethods, testmethod.New()) }
