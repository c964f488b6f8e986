// kiln_bench's `gpu` group (on a machine with a GPU; a row saying why where there is none).
#pragma once

#include "report.h"

#include <vector>

namespace bench {
void run_gpu(bool quick, std::vector<Row>& rows);
}
