package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Between-run statistics of a comparison: the spread of each side's timed
// runs (coefficient of variation), a bootstrap confidence interval of the
// ratio of the two medians over the interleaved runs, and what the number
// of runs allows the U-test to show.

// Alpha is the significance level of every comparison (benchstat's).
const Alpha = 0.05

// bootstrapResamples is the number of resamples of a ratio's bootstrap
// interval; bootstrapSeed makes the interval of one set of runs one
// interval.
const (
	bootstrapResamples = 2000
	bootstrapSeed      = 0x76667362 // "vfsb"
)

// RatioStats is a comparison of a variant's timed runs with the base's:
// the ratio of the medians, its bootstrap 95% confidence interval, each
// side's between-run coefficient of variation, and whether the interval
// or the runs' spread is larger than the effect.
type RatioStats struct {
	// Ratio is the variant's median over the base's (ops/s: higher is
	// faster).
	Ratio float64 `json:"ratio"`
	// Lo and Hi bound Ratio's 95% bootstrap confidence interval (NaN
	// with fewer than two runs a side).
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// CVBase and CVVariant are the coefficients of variation (standard
	// deviation over mean) of each side's timed runs.
	CVBase    float64 `json:"cv_base"`
	CVVariant float64 `json:"cv_variant"`
	// P is the Mann-Whitney U-test's p-value, MinP the smallest p-value
	// the runs' counts allow (2/C(n+m, n)): a count whose MinP is not
	// below Alpha can never be significant.
	P    float64 `json:"p"`
	MinP float64 `json:"min_p"`
	// Significant is P < Alpha.
	Significant bool `json:"significant"`
	// Noisy is true when the runs cannot tell the effect from noise:
	// the interval (half its width) or a side's spread (CV) is larger
	// than the effect |Ratio-1| and than QuietCV, or the ratio is
	// significant while its interval reaches across x1.
	Noisy bool `json:"noisy"`
}

// CV returns the coefficient of variation of xs: the sample standard
// deviation over the mean (0 for fewer than two values or a zero mean).
func CV(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if mean == 0 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(xs)-1)) / math.Abs(mean)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MinP is the smallest two-sided p-value the Mann-Whitney U-test gives for
// samples of n and m values: 2/C(n+m, n), reached when every value of one
// sample is below every value of the other.
func MinP(n, m int) float64 {
	if n < 1 || m < 1 {
		return 1
	}
	// C(n+m, n) computed in floating point: exact for the counts that
	// matter (p near 0.05), and a lower bound for the rest.
	c := 1.0
	for i := 1; i <= n; i++ {
		c = c * float64(m+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// MinCount is the smallest number of runs a side that lets the U-test
// reach p < Alpha when both sides have it (4: with 3 against 3 the
// smallest p is 0.1).
func MinCount() int {
	n := 1
	for MinP(n, n) >= Alpha {
		n++
	}
	return n
}

// CountWarning says, as benchstat does, that n runs against m cannot reach
// p < Alpha; "" when they can.
func CountWarning(n, m int) string {
	if p := MinP(n, m); p >= Alpha {
		return fmt.Sprintf("%d runs against %d can never be significant: the smallest p the U-test gives is %.3f >= %.2f; use --count %d or more",
			n, m, p, Alpha, MinCount())
	}
	return ""
}

// CompareRuns compares a variant's timed runs with the base's (ops/s or
// any higher-is-better rate): the ratio of medians, its bootstrap
// interval and the U-test.
//
// The interval resamples the runs in pairs: the runner interleaves the
// variants (A B B A A B ...), so that run i of both sides ran at nearly
// the same moment, and a pair shares whatever the machine did then.
// With unequal counts (an interrupted run) the sides are resampled
// independently.
func CompareRuns(base, variant []float64) RatioStats {
	st := RatioStats{Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: 1, MinP: MinP(len(base), len(variant))}
	if len(base) == 0 || len(variant) == 0 {
		return st
	}
	st.CVBase, st.CVVariant = CV(base), CV(variant)
	mb, mv := median(base), median(variant)
	if mb != 0 {
		st.Ratio = mv / mb
	}
	bs, _ := summarize(base)
	vs, _ := summarize(variant)
	st.P = compareP(bs, vs)
	st.Significant = st.P < Alpha
	if len(base) >= 2 && len(variant) >= 2 && mb != 0 {
		st.Lo, st.Hi = bootstrapRatio(base, variant)
	}
	st.Noisy = noisy(st)
	return st
}

// noisy says whether a comparison cannot tell its effect from noise: no
// interval, or an interval (half its width, relative) or a side's spread
// (CV) larger than the effect |Ratio-1| and than a quiet machine's spread
// (QuietCV), or a significant ratio whose interval still reaches across
// x1.
func noisy(st RatioStats) bool {
	if math.IsNaN(st.Lo) || math.IsNaN(st.Ratio) {
		return true
	}
	effect := math.Abs(st.Ratio - 1)
	half := (st.Hi - st.Lo) / 2 / st.Ratio
	spread := math.Max(st.CVBase, st.CVVariant)
	switch {
	case st.Significant && st.Lo <= 1 && st.Hi >= 1:
		return true
	case half > effect && half > QuietCV:
		return true
	case spread > effect && spread > QuietCV:
		return true
	}
	return false
}

// bootstrapRatio returns the 2.5% and 97.5% percentiles of the ratio of
// medians over resampled runs.
func bootstrapRatio(base, variant []float64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(bootstrapSeed, uint64(len(base))<<32|uint64(len(variant))))
	paired := len(base) == len(variant)
	rb := make([]float64, len(base))
	rv := make([]float64, len(variant))
	ratios := make([]float64, 0, bootstrapResamples)
	for range bootstrapResamples {
		for i := range rb {
			j := rng.IntN(len(base))
			rb[i] = base[j]
			if paired {
				rv[i] = variant[j]
			}
		}
		if !paired {
			for i := range rv {
				rv[i] = variant[rng.IntN(len(variant))]
			}
		}
		if b := median(rb); b != 0 {
			ratios = append(ratios, median(rv)/b)
		}
	}
	if len(ratios) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(ratios)
	at := func(q float64) float64 {
		return ratios[min(len(ratios)-1, max(0, int(math.Floor(q*float64(len(ratios))))))]
	}
	return at(0.025), at(0.975)
}

// GeoMean is the geometric mean of the positive finite values of xs (NaN
// when there is none), as benchstat's geomean row.
func GeoMean(xs []float64) float64 {
	var s float64
	n := 0
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 0) {
			s += math.Log(x)
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return math.Exp(s / float64(n))
}
