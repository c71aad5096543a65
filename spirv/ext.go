package spirv

// ExtInst calls a GLSL.std.450 instruction with an explicit result type.
func (f *Function) ExtInst(t ID, inst GLSLInst, args ...ID) ID {
	set := f.m.GLSLImport()
	return f.Op(OpExtInst, t, append([]uint32{uint32(set), uint32(inst)}, idWords(args)...)...)
}

// GLSL calls a GLSL.std.450 instruction whose result has the type of its
// first argument (most of them: FMin, Exp, Sqrt, Fma, FClamp, ...). Use
// ExtInst for the few that differ (Length, Distance, the pack functions).
func (f *Function) GLSL(inst GLSLInst, args ...ID) ID {
	if len(args) == 0 {
		f.m.failf("GLSL %s: no arguments", inst)
		return 0
	}
	return f.ExtInst(f.m.TypeOf(args[0]), inst, args...)
}

// Min and Max pick FMin/SMin/UMin (FMax/...) by type. The float forms return
// either operand when one is NaN; emitters needing NaN propagation (XLA's
// minimum and maximum) add an IsNan select.
func (f *Function) Min(a, b ID) ID {
	return f.GLSL(glslByKind(f, a, GLSLFMin, GLSLSMin, GLSLUMin), a, b)
}
func (f *Function) Max(a, b ID) ID {
	return f.GLSL(glslByKind(f, a, GLSLFMax, GLSLSMax, GLSLUMax), a, b)
}

// Abs is FAbs or SAbs by type (unsigned values are returned as they are).
func (f *Function) Abs(a ID) ID {
	t := f.m.TypeOf(a)
	if f.m.IsInt(t) && !f.m.IsSigned(t) {
		return a
	}
	return f.GLSL(glslByKind(f, a, GLSLFAbs, GLSLSAbs, GLSLSAbs), a)
}

func glslByKind(f *Function, a ID, fi, si, ui GLSLInst) GLSLInst {
	t := f.m.TypeOf(a)
	switch {
	case f.m.IsFloat(t):
		return fi
	case f.m.IsSigned(t):
		return si
	}
	return ui
}
