package passes

import (
	"errors"
	"strings"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func TestExpandCollectives(t *testing.T) {
	runPassCases(t, []passCase{{
		name:     "identities, zeros and ids",
		disabled: OptionalNames(),
		before: `HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e (x: f32[4], y: f32[2]) -> (f32[4], f32[2], f32[4], f32[2], f32[2], u32[], u32[]) {
  %x = f32[4] parameter(0)
  %y = f32[2] parameter(1)
  %ar = (f32[4], f32[2]) all-reduce(%x, %y), replica_groups={{0}}, to_apply=%add
  %ar.0 = f32[4] get-tuple-element(%ar), index=0
  %ags = (f32[2], f32[2]) all-gather-start(%y), replica_groups=[1,1]<=[1], dimensions={0}
  %agd = f32[2] all-gather-done(%ags)
  %rs = f32[4] reduce-scatter(%x), replica_groups={}, dimensions={0}, to_apply=%add
  %cp = f32[2] collective-permute(%y), source_target_pairs={}
  %cps = (f32[2], f32[2]) collective-permute-start(%y), source_target_pairs={{0,0}}
  %cpd = f32[2] collective-permute-done(%cps)
  %rid = u32[] replica-id()
  %pid = u32[] partition-id()
  ROOT %t = (f32[4], f32[2], f32[4], f32[2], f32[2], u32[], u32[]) tuple(%ar.0, %agd, %rs, %cp, %cpd, %rid, %pid)
}
`,
		after: `HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e (x: f32[4], y: f32[2]) -> (f32[4], f32[2], f32[4], f32[2], f32[2], u32[], u32[]) {
  %x = f32[4] parameter(0)
  %y = f32[2] parameter(1)
  %ar.tuple = (f32[4], f32[2]) tuple(%x, %y)
  %ar.0 = f32[4] get-tuple-element(%ar.tuple), index=0
  %ags.tuple = (f32[2], f32[2]) tuple(%y, %y)
  %agd.get-tuple-element = f32[2] get-tuple-element(%ags.tuple), index=1
  %cp.constant = f32[] constant(0)
  %cp.broadcast = f32[2] broadcast(%cp.constant), dimensions={}
  %cps.tuple = (f32[2], f32[2]) tuple(%y, %y)
  %cpd.get-tuple-element = f32[2] get-tuple-element(%cps.tuple), index=1
  %rid.constant = u32[] constant(0)
  %pid.constant = u32[] constant(0)
  ROOT %t = (f32[4], f32[2], f32[4], f32[2], f32[2], u32[], u32[]) tuple(%ar.0, %agd.get-tuple-element, %x, %cp.broadcast, %cpd.get-tuple-element, %rid.constant, %pid.constant)
}
`,
	}})
}

func TestExpandCollectivesRefusesReplicas(t *testing.T) {
	for _, attr := range []string{"replica_groups={{0,1}}", "replica_groups=[1,2]<=[2]", "replica_groups={{1}}"} {
		m, err := hlo.ParseModule(`HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %sum = f32[4] all-reduce(%x), ` + attr + `, to_apply=%add
}
`)
		if err != nil {
			t.Fatal(err)
		}
		err = Run(m, Config{})
		if !errors.Is(err, hlo.ErrUnsupported) || !strings.Contains(err.Error(), "sum") {
			t.Errorf("%s: got %v, want hlo.ErrUnsupported naming the instruction sum", attr, err)
		}
	}
}
