package mcp

import "testing"

func TestCleanValidation(t *testing.T) {
	cases := map[string]string{
		`validating root: required: missing properties: ["a"]`:                                 `missing required arguments: ["a"]`,
		`validating root: validating /properties/b: maximum: 11/1 is greater than 10.000000`:   `argument "b": 11 is greater than 10`,
		`validating root: validating /properties/c: enum: z does not equal any of: [x y]`:      `argument "c": z does not equal any of: [x y]`,
		`validating root: validating /properties/a: type: 1 has type "integer", want "string"`: `argument "a": 1 has type "integer", want "string"`,
		`validating root: unexpected additional properties ["zz"]`:                             `unknown arguments ["zz"]`,
	}
	for in, want := range cases {
		if got := cleanValidation(in); got != want {
			t.Errorf("cleanValidation(%q) = %q, want %q", in, got, want)
		}
	}
}
