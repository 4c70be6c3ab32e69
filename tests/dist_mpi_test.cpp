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
