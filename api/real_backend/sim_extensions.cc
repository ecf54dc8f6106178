// sim_extensions.cc -- rpma_sim.h under the real librpma backend: every extension exists, so
// a test suite that uses them links against both backends, and reports RPMA_E_NOSUPP, so it
// can skip what only a simulator can do.
#include <rpma_sim.h>

int rpma_sim_set_device_cap(enum rpma_sim_device_cap cap, bool enabled) { return RPMA_E_NOSUPP; }

int rpma_sim_get_device_cap(enum rpma_sim_device_cap cap, bool* enabled) { return RPMA_E_NOSUPP; }

int rpma_sim_set_transport(enum rpma_sim_transport transport) { return RPMA_E_NOSUPP; }

int rpma_sim_get_transport(enum rpma_sim_transport* transport) { return RPMA_E_NOSUPP; }

int rpma_sim_node_fail(struct rpma_peer* peer) { return RPMA_E_NOSUPP; }

int rpma_sim_fault_add(const char* rule) { return RPMA_E_NOSUPP; }

int rpma_sim_fault_clear(void) { return RPMA_E_NOSUPP; }

int rpma_sim_fault_count(uint64_t* fired) { return RPMA_E_NOSUPP; }

int rpma_sim_fault_seed(uint64_t* seed) { return RPMA_E_NOSUPP; }

int rpma_sim_fault_set_seed(uint64_t seed) { return RPMA_E_NOSUPP; }

int rpma_sim_fault_point_set(int64_t n) { return RPMA_E_NOSUPP; }

int rpma_sim_fault_point_passed(int64_t* passed) { return RPMA_E_NOSUPP; }

int rpma_sim_power_failure_arm(struct rpma_peer* peer) { return RPMA_E_NOSUPP; }

int rpma_sim_power_failure(struct rpma_peer* peer, enum rpma_sim_loss mode) {
  return RPMA_E_NOSUPP;
}

int rpma_sim_persist(const void* addr, size_t len) { return RPMA_E_NOSUPP; }

int rpma_sim_persistence_report(void) { return RPMA_E_NOSUPP; }

int rpma_sim_crash_record(struct rpma_peer* peer) { return RPMA_E_NOSUPP; }

int rpma_sim_crash_record_stop(struct rpma_peer* peer, const char* journal) {
  return RPMA_E_NOSUPP;
}

int rpma_sim_crash_explore(const char* journal, const struct rpma_sim_crash_options* options,
                           rpma_sim_crash_check check, void* arg,
                           struct rpma_sim_crash_summary* summary) {
  return RPMA_E_NOSUPP;
}

int rpma_sim_crash_lint(const char* journal, rpma_sim_crash_finding finding, void* arg) {
  return RPMA_E_NOSUPP;
}
