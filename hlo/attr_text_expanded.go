package hlo

import (
	"fmt"
	"strconv"
	"strings"
)

// The text form of the expanded ops' attributes. They join the attribute table of
// attr_text.go here (attrCodecs first, as opAttrs rows read it), so that the
// printer and the parser share one codec per attribute name.
func init() {
	for name, c := range map[string]attrCodec{
		"epsilon":                     epsilonCodec(),
		"feature_index":               intCodec(func(a *Attributes) *int64 { return &a.FeatureIndex }, anyInt),
		"replica_groups":              intListsCodec(func(a *Attributes) *[][]int64 { return &a.ReplicaGroups }, true),
		"source_target_pairs":         intListsCodec(func(a *Attributes) *[][]int64 { return &a.SourceTargetPairs }, false),
		"channel_id":                  channelIDCodec(),
		"use_global_device_ids":       boolCodec(func(a *Attributes) *bool { return &a.UseGlobalDeviceIDs }),
		"custom_call_target":          customCallTargetCodec(),
		"api_version":                 customCallEnumCodec("api_version", customCallAPIVersions, "API_VERSION_ORIGINAL", func(c *CustomCallAttrs) *string { return &c.APIVersion }),
		"schedule":                    customCallEnumCodec("schedule", customCallSchedules, "SCHEDULE_NONE", func(c *CustomCallAttrs) *string { return &c.Schedule }),
		"custom_call_has_side_effect": customCallSideEffectCodec(),
		"operand_layout_constraints":  layoutConstraintsCodec(),
		"output_to_operand_aliasing":  aliasingCodec(),
		"called_computations":         calledListCodec(),
	} {
		attrCodecs[name] = c
	}
	// backend_config and algorithm are ignored on other ops (the table of
	// attr_xla.go); these ops read them, and an op's own attributes come first.
	attrCodecs["backend_config"] = backendConfigCodec()
	attrCodecs["algorithm"] = rngAlgorithmCodec()

	batchNorm := []attrUse{req("epsilon"), req("feature_index")}
	groups := opt("replica_groups")
	channel, global := opt("channel_id"), opt("use_global_device_ids")
	for op, uses := range map[Opcode][]attrUse{
		OpBatchNormTraining:  batchNorm,
		OpBatchNormInference: batchNorm,
		OpBatchNormGrad:      batchNorm,
		OpRngBitGenerator:    {req("algorithm")},
		OpAllReduce:          {channel, groups, global, req("to_apply")},
		OpAllReduceStart:     {channel, groups, global, req("to_apply")},
		OpAllGather:          {channel, groups, global, req("dimensions")},
		OpAllGatherStart:     {channel, groups, global, req("dimensions")},
		OpReduceScatter:      {channel, groups, global, req("dimensions"), req("to_apply")},
		// all-to-all of several operands has no dimension and prints none.
		OpAllToAll: {channel, groups, {name: "dimensions",
			codec: intListCodec(func(a *Attributes) *[]int64 { return &a.Dimensions }, nonEmpty)}},
		OpCollectiveBroadcast:    {channel, groups},
		OpCollectivePermute:      {channel, req("source_target_pairs")},
		OpCollectivePermuteStart: {channel, req("source_target_pairs")},
		OpCustomCall: {opt("window"), opt("dim_labels"), opt("feature_group_count"), opt("batch_group_count"),
			req("custom_call_target"), opt("api_version"), opt("backend_config"),
			opt("operand_layout_constraints"), opt("output_to_operand_aliasing"),
			opt("custom_call_has_side_effect"), opt("schedule"), opt("called_computations"),
			// XLA's TopK carries its comparator as to_apply: read into the same list.
			{name: "to_apply", codec: attrCodec{print: never, parse: calledCodec(0).parse}}},
	} {
		opAttrs[op] = uses
	}
}

// calledListCodec is custom-call's called_computations={%a, %b}, printed when
// there are any.
func calledListCodec() attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) { return computationList(in.Called), len(in.Called) > 0 },
		parse: func(p *parser, in *Instruction) error { return p.parseCalledList(in) },
	}
}

// channelIDCodec is channel_id=N, printed when one was given (XLA's is optional,
// and its presence alone changes how replica groups name devices).
func channelIDCodec() attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) {
			return strconv.FormatInt(in.Attrs.ChannelID, 10), in.Attrs.HasChannelID
		},
		parse: func(p *parser, in *Instruction) error {
			t := p.next()
			v, err := strconv.ParseInt(t.text, 10, 64)
			if t.kind != tokNumber || err != nil {
				return p.errorAt(t.pos, "expected an integer channel id, found %s", t.describe())
			}
			in.Attrs.ChannelID, in.Attrs.HasChannelID = v, true
			return nil
		},
	}
}

func epsilonCodec() attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) {
			return strconv.FormatFloat(float64(in.Attrs.Epsilon), 'g', -1, 32), true
		},
		parse: func(p *parser, in *Instruction) error {
			t := p.next()
			v, err := strconv.ParseFloat(t.text, 32)
			if t.kind != tokNumber || err != nil {
				return p.errorAt(t.pos, "expected a floating-point epsilon, found %s", t.describe())
			}
			in.Attrs.Epsilon = float32(v)
			return nil
		},
	}
}

func rngAlgorithmCodec() attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) { return in.Attrs.RngAlgorithm.String(), true },
		parse: func(p *parser, in *Instruction) error {
			return p.parseEnum(func(s string) (err error) { in.Attrs.RngAlgorithm, err = ParseRngAlgorithm(s); return })
		},
	}
}

// intListsCodec is a list of integer lists, {{0},{1,2}}; replica_groups also takes
// XLA's iota form [G,S]<=[N] or [G,S]<=[d0,d1]T(perm), which is read as the list it
// stands for. Replica groups always print (XLA prints {} for "every replica").
func intListsCodec(field func(*Attributes) *[][]int64, iotaForm bool) attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) { return replicaGroupsText(*field(readOnly(in))), true },
		parse: func(p *parser, in *Instruction) (err error) {
			if iotaForm && p.peek().text == "[" {
				*field(&in.Attrs), err = p.parseIotaReplicaGroups()
				return err
			}
			*field(&in.Attrs), err = p.parseIntLists()
			return err
		},
	}
}

func replicaGroupsText(groups [][]int64) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = intList(g)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// parseIntLists reads {{0,1},{2}} or {} (empty, not nil).
func (p *parser) parseIntLists() ([][]int64, error) {
	lists, err := parseBracedList(p, "integer lists", p.parseIntList)
	if lists == nil && err == nil {
		lists = [][]int64{}
	}
	return lists, err
}

// maxIotaReplicas bounds the iota form's device count, so that a typo cannot make
// the parser allocate much.
const maxIotaReplicas = 1 << 16

// parseIotaReplicaGroups reads [G,S]<=[dims] with an optional T(perm): the device
// ids 0…N-1 laid out in dims, transposed by perm, and read as G groups of S.
func (p *parser) parseIotaReplicaGroups() ([][]int64, error) {
	start := p.peek().pos
	groupDims, err := p.parseBracketInts()
	if err != nil {
		return nil, err
	}
	if t := p.next(); t.text != "<" || p.next().text != "=" {
		return nil, p.errorAt(t.pos, "expected '<=' in iota replica groups")
	}
	dims, perm, err := p.parseIotaDevices()
	if err != nil {
		return nil, err
	}
	groups, err := iotaGroups(groupDims, dims, perm)
	if err != nil {
		return nil, p.errorAt(start, "iota replica groups: %v", err)
	}
	return groups, nil
}

// parseIotaDevices reads the device ids of XLA's iota form after its '<=': [dims]
// with an optional T(perm) (default: no transpose). Replica groups and shardings
// (their iota tile assignments) write it alike.
func (p *parser) parseIotaDevices() (dims, perm []int64, err error) {
	if dims, err = p.parseBracketInts(); err != nil {
		return nil, nil, err
	}
	perm = Iota64(len(dims))
	if t := p.peek(); t.kind == tokName && t.text == "T" {
		p.next()
		if perm, err = p.parseParenInts(); err != nil {
			return nil, nil, err
		}
	}
	return dims, perm, nil
}

// iotaGroups expands the iota form: ids laid out row-major in dims, transposed by
// perm, then split row-major into groupDims[0] groups of groupDims[1].
func iotaGroups(groupDims, dims, perm []int64) ([][]int64, error) {
	n := int64(1)
	for _, d := range dims {
		if d < 1 || n*d > maxIotaReplicas {
			return nil, fmt.Errorf("device dims %v are not positive or exceed %d devices", dims, maxIotaReplicas)
		}
		n *= d
	}
	if len(groupDims) != 2 || groupDims[0] < 1 || groupDims[1] < 1 || groupDims[0]*groupDims[1] != n {
		return nil, fmt.Errorf("group dims %v do not split %d devices into groups", groupDims, n)
	}
	if !isPermutation(perm, len(dims)) {
		return nil, fmt.Errorf("T%v is not a permutation of %d dimensions", perm, len(dims))
	}
	src := MakeShape(S64, dims...)
	tdims := make([]int64, len(dims))
	for i, q := range perm {
		tdims[i] = dims[q]
	}
	t := MakeShape(S64, tdims...)
	ids := make([]int64, n)
	srcStrides := src.Strides()
	for i := range ids {
		idx := unflatten(int64(i), t)
		id := int64(0)
		for k, q := range perm {
			id += idx[k] * srcStrides[q]
		}
		ids[i] = id
	}
	groups := make([][]int64, groupDims[0])
	for g := range groups {
		groups[g] = ids[int64(g)*groupDims[1] : int64(g+1)*groupDims[1]]
	}
	return groups, nil
}

func isPermutation(perm []int64, n int) bool {
	if len(perm) != n {
		return false
	}
	seen := make([]bool, n)
	for _, q := range perm {
		if q < 0 || q >= int64(n) || seen[q] {
			return false
		}
		seen[q] = true
	}
	return true
}

func unflatten(i int64, s Shape) []int64 {
	idx := make([]int64, s.Rank())
	for d := s.Rank() - 1; d >= 0; d-- {
		idx[d] = i % s.Dims[d]
		i /= s.Dims[d]
	}
	return idx
}

func (p *parser) parseBracketInts() ([]int64, error) { return p.parseDelimitedInts("[", "]") }
func (p *parser) parseParenInts() ([]int64, error)   { return p.parseDelimitedInts("(", ")") }

func (p *parser) parseDelimitedInts(open, close string) ([]int64, error) {
	if err := p.expect(open, "to open a list of integers"); err != nil {
		return nil, err
	}
	var xs []int64
	for !p.accept(close) {
		if len(xs) > 0 {
			if err := p.expect(",", "or '"+close+"' in a list of integers"); err != nil {
				return nil, err
			}
		}
		v, err := p.parseInt()
		if err != nil {
			return nil, err
		}
		xs = append(xs, v)
	}
	return xs, nil
}

// customCall returns the instruction's custom-call attributes, allocating them.
func customCall(a *Attributes) *CustomCallAttrs {
	if a.CustomCall == nil {
		a.CustomCall = &CustomCallAttrs{}
	}
	return a.CustomCall
}

func customCallTargetCodec() attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) {
			return strconv.Quote(customCall(readOnly(in)).Target), true
		},
		parse: func(p *parser, in *Instruction) (err error) {
			customCall(&in.Attrs).Target, err = p.parseString("custom_call_target")
			return err
		},
	}
}

// parseString reads a quoted string and returns its contents.
func (p *parser) parseString(attr string) (string, error) {
	t := p.peek()
	if t.kind != tokString {
		return "", p.errorAt(t.pos, "expected a quoted string for %s, found %s", attr, t.describe())
	}
	if err := p.stringToken(attr); err != nil {
		return "", err
	}
	s, err := unquoteC(t.text)
	if err != nil {
		return "", p.errorAt(t.pos, "malformed string in %s: %v", attr, err)
	}
	return s, nil
}

// customCallEnumCodec reads an enum of XLA's hlo.proto, matched in any case as
// XLA matches it, and keeps its name as XLA prints it; the default, def, is not
// printed.
// unquoteC reads a string as XLA writes it (absl::CEscape): Go's escapes, and \'
// for a single quote, which Go's double-quoted strings lack.
func unquoteC(quoted string) (string, error) {
	var sb strings.Builder
	for i := 0; i < len(quoted); i++ {
		if quoted[i] == '\\' && i+1 < len(quoted) {
			if quoted[i+1] == '\'' {
				sb.WriteByte('\'')
			} else {
				sb.WriteString(quoted[i : i+2])
			}
			i++
			continue
		}
		sb.WriteByte(quoted[i])
	}
	return strconv.Unquote(sb.String())
}

func customCallEnumCodec(attr string, values []string, def string, field func(*CustomCallAttrs) *string) attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) {
			v := *field(customCall(readOnly(in)))
			return v, v != "" && v != def
		},
		parse: func(p *parser, in *Instruction) error {
			return p.parseEnum(func(s string) error {
				i := matchEnum(values, s, true)
				if i < 0 {
					return enumError(attr, s, values)
				}
				*field(customCall(&in.Attrs)) = values[i]
				return nil
			})
		},
	}
}

func customCallSideEffectCodec() attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) { return "true", customCall(readOnly(in)).HasSideEffect },
		parse: func(p *parser, in *Instruction) (err error) {
			customCall(&in.Attrs).HasSideEffect, err = p.parseBool()
			return err
		},
	}
}

// backendConfigCodec reads backend_config="…" or backend_config={…} (JSON, or an
// MLIR attribute dictionary); the braced text is kept as written.
func backendConfigCodec() attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) {
			c := customCall(readOnly(in))
			if c.Braced {
				return c.BackendConfig, true
			}
			return strconv.Quote(c.BackendConfig), c.BackendConfig != ""
		},
		parse: func(p *parser, in *Instruction) error {
			c := customCall(&in.Attrs)
			t := p.peek()
			if t.text != "{" {
				s, err := p.parseString("backend_config")
				c.BackendConfig = s
				return err
			}
			if !p.skipBalanced() {
				return p.errorAt(t.pos, "unterminated { in the value of backend_config")
			}
			c.BackendConfig, c.Braced = p.src[t.pos:p.pos], true
			_, err := ParseBackendConfig(c.BackendConfig)
			if err != nil {
				return p.errorAt(t.pos, "backend_config: %v", err)
			}
			return nil
		},
	}
}

func layoutConstraintsCodec() attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) {
			shapes := customCall(readOnly(in)).OperandLayoutConstraints
			parts := make([]string, len(shapes))
			for i, s := range shapes {
				parts[i] = layoutShapeString(s)
			}
			return "{" + strings.Join(parts, ", ") + "}", shapes != nil
		},
		parse: func(p *parser, in *Instruction) error {
			if err := p.expect("{", "to open operand_layout_constraints"); err != nil {
				return err
			}
			shapes := []Shape{}
			for !p.accept("}") {
				if len(shapes) > 0 {
					if err := p.expect(",", "or '}' in operand_layout_constraints"); err != nil {
						return err
					}
				}
				s, err := p.parseShape()
				if err != nil {
					return err
				}
				shapes = append(shapes, s)
			}
			customCall(&in.Attrs).OperandLayoutConstraints = shapes
			return nil
		},
	}
}

// aliasingCodec reads output_to_operand_aliasing={{0}: (1, {}), {}: (0, {})}.
func aliasingCodec() attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) {
			as := customCall(readOnly(in)).OutputToOperandAliasing
			parts := make([]string, len(as))
			for i, a := range as {
				parts[i] = fmt.Sprintf("%s: (%d, %s)", intList(a.Output), a.Operand, intList(a.OperandIndex))
			}
			return "{" + strings.Join(parts, ", ") + "}", as != nil
		},
		parse: func(p *parser, in *Instruction) (err error) {
			customCall(&in.Attrs).OutputToOperandAliasing, err = p.parseAliasList()
			return err
		},
	}
}

// parseAliasList reads {{0}: (1, {}), {}: (0, {})} (empty: not nil).
func (p *parser) parseAliasList() ([]OutputOperandAlias, error) {
	as, err := parseBracedList(p, "output_to_operand_aliasing entries", p.parseAlias)
	if as == nil && err == nil {
		as = []OutputOperandAlias{}
	}
	return as, err
}

func (p *parser) parseAlias() (a OutputOperandAlias, err error) {
	if a.Output, err = p.parseIntList(); err != nil {
		return a, err
	}
	if err = p.expect(":", "after an output index in output_to_operand_aliasing"); err != nil {
		return a, err
	}
	if err = p.expect("(", "to open an (operand, index) pair"); err != nil {
		return a, err
	}
	if a.Operand, err = p.parseInt(); err != nil {
		return a, err
	}
	if err = p.expect(",", "after the operand number"); err != nil {
		return a, err
	}
	if a.OperandIndex, err = p.parseIntList(); err != nil {
		return a, err
	}
	return a, p.expect(")", "to close an (operand, index) pair")
}
