package business_test

import (
	"fmt"

	"github.com/svcplatform/svc/internal/business"
)

func ExampleOf() {
	fmt.Println(business.Of("1042"))
	// Output: bp_1042
}
