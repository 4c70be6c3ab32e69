#pragma once
/// \file
/// Everything a user of gsearch includes.

#include "gsearch/asof.hpp"
#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/error.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/span.hpp"
#include "gsearch/device.hpp"
#include "gsearch/dist.hpp"
#include "gsearch/execution.hpp"
#include "gsearch/find.hpp"
#include "gsearch/functional_arrays.hpp"
#include "gsearch/index_intervals.hpp"
#include "gsearch/merge.hpp"
#include "gsearch/search.hpp"
#include "gsearch/selection.hpp"
#include "gsearch/server.hpp"
#include "gsearch/server_socket.hpp"
#include "gsearch/static_index.hpp"
#include "gsearch/version.hpp"
