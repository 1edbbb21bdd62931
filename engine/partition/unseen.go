package partition

// NotSeen adds to the plan's warnings each scratch root in roots that
// could not be read: a plan made without the kernels under it cannot
// tell which moved devices are held.
func (p *Plan) NotSeen(roots []string) {
	for _, r := range roots {
		p.Warnings = append(p.Warnings, r+": the kernels under it are not seen, so a moved device may be held")
	}
}
