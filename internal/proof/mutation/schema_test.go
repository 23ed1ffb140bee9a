package mutation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSchemaFile: each boolean mutant is rewritten into a call of its
// helper, nested ones inside the others, the right operand of && and ||
// in a function literal (evaluated only when it decides), lines kept; an
// arithmetic mutant is not, nor one whose text regroups under Go's
// precedence (the first && of a && b && !c made || is a || (b && !c),
// not (a || b) && !c).
func TestSchemaFile(t *testing.T) {
	const src = `package p

func f(a, b, c bool, n int) bool {
	return a && b && !c ||
		n*2 >= 3 && n != 1
}
`
	path := write(t, t.TempDir(), "p.go", src)
	ms, err := Find(path)
	require.NoError(t, err)
	ids := make([]int, len(ms))
	for i := range ms {
		ids[i] = i + 1
	}
	out, took, err := schemaFile([]byte(src), ms, ids)
	require.NoError(t, err)
	assert.Equal(t, `package p

func f(a, b, c bool, n int) bool {
	return mutationSchemaLogic(a && b , func() bool { return mutationSchemaNot(c, 3) }, true, 2) ||
		mutationSchemaOrdered(n*2 , 3, 3, 6, 2, 7, 0) && mutationSchemaFlip(n != 1, 9)
}
`, string(out))
	var in []string
	for i, m := range ms {
		if _, ok := took[ids[i]]; ok {
			in = append(in, m.Was+" => "+m.Now)
		}
	}
	assert.Equal(t, []string{"a && b && !c => a && b || !c", "!c => c", "n*2 >= 3 => n*2 > 3", "n*2 >= 3 => n*2 < 3", "n != 1 => n == 1"}, in,
		"not a && b made a || b: regrouped, a || (b && !c); nor either && below the || made || or the || made &&; nor n*2 made n/2: arithmetic")
	assert.Equal(t, strings.Count(src, "\n"), strings.Count(string(out), "\n"), "lines kept")
}
