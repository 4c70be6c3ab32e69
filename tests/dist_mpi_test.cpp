// The distributed operations over MPI (gsearch::mpi), run by CTest as mpirun -np 1, 2 and 4:
// every case of dist_cases.hpp, each rank checking its part against the single-process result.

#include <gtest/gtest.h>
#include <mpi.h>

#include "dist_cases.hpp"
#include "gsearch/dist/mpi.hpp"

namespace gsearch::test {
namespace {

TEST(DistMpi, AllCases) {
  auto comm = dist::make_mpi_communicator(MPI_COMM_WORLD);
  uint64_t seed = comm->rank() == 0 ? test_seed() : 0;  // rank 0's seed for every rank
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  dist_cases::host_memory mem;
  dist_cases::all_cases(mem, *comm, seed);
}

// Rank r fails at every agreement point of every operation in turn (GSEARCH_DIST_FAULT, set on
// every rank): every rank throws, or none does, and none waits for ever (the test's timeout).
TEST(DistMpi, RanksFailTogether) {
  auto comm = dist::make_mpi_communicator(MPI_COMM_WORLD);
  dist_cases::every_fault(comm->size(), [&](int op, int faulty) {
    dist_cases::host_memory mem;
    const int threw = dist_cases::fault_thrown(mem, *comm, op, faulty);
    int lo = threw, hi = threw;  // the same on every rank? (plain MPI: the check must not rely on gsearch)
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi ? threw : -1;
  });
  dist_cases::host_memory mem;
  for (int faulty = 0; faulty < comm->size(); ++faulty) dist_cases::failed_allocation(mem, *comm, faulty);
  dist_cases::replicated_keys_as_sharded(mem, *comm);
}

TEST(DistMpi, LargeCountsInPieces) {
  // A part of more than one 1 GiB piece would take too long here; the pieces' arithmetic is
  // exercised with the smallest parts instead: empty parts to some ranks, to itself only.
  auto comm = dist::make_mpi_communicator(MPI_COMM_WORLD);
  const int p = comm->size(), me = comm->rank();
  std::vector<int64_t> send(size_t(p), 0), recv(size_t(p), 0);
  send[size_t(me)] = recv[size_t(me)] = 8;
  int64_t x = 42 + me, y = 0;
  comm->alltoallv(&x, send.data(), &y, recv.data(), nullptr);
  EXPECT_EQ(y, 42 + me);
}

}  // namespace
}  // namespace gsearch::test

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  int worst = 0;  // every rank's failures fail the run
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
