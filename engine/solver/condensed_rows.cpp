// The compliant rows condensed into a sparse node-space factor (condensed_rows.h): the executor
// code of engine/exec/condensed_solve.h run by the host executor on the rows where they are, the
// same code the step pipeline runs (pipeline_newton.h).
#include "engine/solver/condensed_rows.h"

#include "engine/exec/condensed_solve.h"
#include "engine/exec/host_executor.h"

namespace cs {

struct CondensedRows::Impl {
    HostExecutor exec;
    CondensedSolve<HostExecutor> solve;
    int rowCount = 0;
    const int* kind = nullptr;
    const Real *softness = nullptr, *maxImpulse = nullptr;

    CondensedInput input(const RowSystemView& view) const { return {view, kind, softness, maxImpulse, &rowCount}; }
};

CondensedRows::CondensedRows() : impl_(std::make_unique<Impl>()) {}
CondensedRows::~CondensedRows() = default;
CondensedRows::CondensedRows(const CondensedRows&) : impl_(std::make_unique<Impl>()) {}
CondensedRows& CondensedRows::operator=(const CondensedRows&) {
    impl_ = std::make_unique<Impl>();
    rowSoft_.clear();
    stats_ = CondensedStats{};
    return *this;
}

bool CondensedRows::prepare(const ConstraintRows& rows, const RowSystemView& view) {
    Impl& m = *impl_;
    const int n = rows.size();
    m.rowCount = n;
    m.kind = rows.kind.data();
    m.softness = rows.softness.data();
    m.maxImpulse = rows.maxImpulse.data();
    const bool ok = m.solve.prepare(m.exec, m.input(view));
    rowSoft_.assign(n, 0);
    for (int i = 0; i < n; ++i) rowSoft_[i] = m.solve.hostRowClass(i) == kCondensedSoft;
    stats_ = m.solve.stats();
    return ok;
}

bool CondensedRows::solve(const RowSystemView& view, const Real* compliance, const Real* b, Real* fixed, Real* step) {
    return impl_->solve.solve(impl_->exec, impl_->input(view), compliance, b, fixed, step);
}

}  // namespace cs
