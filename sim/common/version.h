// version.h -- rpma-sim's own version and the librpma API version it implements.
#ifndef RPMA_SIM_COMMON_VERSION_H_
#define RPMA_SIM_COMMON_VERSION_H_

namespace rpma_sim {

constexpr char kVersion[] = "0.13.0";
constexpr char kLibrpmaApiVersion[] = "1.3.0";

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_VERSION_H_
