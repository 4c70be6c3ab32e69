// core/functional_arrays.hpp: the increment rule and the carve, by hand on small lines.

#include <gtest/gtest.h>

#include "gsearch/core/functional_arrays.hpp"

namespace gsearch::core {
namespace {

TEST(CoreFunctionalArrays, ShiftRules) {
  // Inserting after p = 10: starts after 10 move, ends at or after 10 move, opens after 10 move.
  EXPECT_EQ(fa_shift_first(10, 10), 10);
  EXPECT_EQ(fa_shift_first(11, 10), 13);
  EXPECT_EQ(fa_shift_last(10, 10), 12);  // a piece ending at the parent's open holds its new child
  EXPECT_EQ(fa_shift_last(9, 10), 9);
  EXPECT_EQ(fa_shift_open(10, 10), 10);
  EXPECT_EQ(fa_shift_open(11, 10), 13);
}

TEST(CoreFunctionalArrays, CarveTheHoldingPiece) {
  fa_span s{4, 20};  // index 7 on [4, 20]; insert a child of the version at 10
  bool carved = false;
  const fa_span after = fa_insert_step(s, 7, 7, 10, carved);
  EXPECT_TRUE(carved);
  EXPECT_EQ(s.first, 4);
  EXPECT_EQ(s.last, 10);        // up to the parent
  EXPECT_EQ(after.first, 13);   // the child's [11, 12] taken out
  EXPECT_EQ(after.last, 22);    // the rest, shifted
  EXPECT_EQ(fa_child_span(10).first, 11);
  EXPECT_EQ(fa_child_span(10).last, 12);
}

TEST(CoreFunctionalArrays, CarveAtTheEndLeavesNoRemainder) {
  fa_span s{4, 10};  // the piece ends at the parent's open
  bool carved = false;
  const fa_span after = fa_insert_step(s, 7, 7, 10, carved);
  EXPECT_TRUE(carved);
  EXPECT_EQ(s.first, 4);
  EXPECT_EQ(s.last, 10);
  EXPECT_TRUE(fa_is_free(after));
}

TEST(CoreFunctionalArrays, OtherCellsOnlyShift) {
  bool carved = true;
  fa_span other_index{4, 20};
  EXPECT_TRUE(fa_is_free(fa_insert_step(other_index, 8, 7, 10, carved)));
  EXPECT_FALSE(carved);
  EXPECT_EQ(other_index.first, 4);
  EXPECT_EQ(other_index.last, 22);  // holds the parent, so it holds the child too
  fa_span later{12, 30};            // after the parent: moves whole
  fa_insert_step(later, 7, 7, 10, carved);
  EXPECT_FALSE(carved);
  EXPECT_EQ(later.first, 14);
  EXPECT_EQ(later.last, 32);
  fa_span earlier{1, 9};  // before: stays
  fa_insert_step(earlier, 7, 7, 10, carved);
  EXPECT_EQ(earlier.first, 1);
  EXPECT_EQ(earlier.last, 9);
  fa_span free_cell = fa_free_cell();
  fa_insert_step(free_cell, 7, 7, 0, carved);
  EXPECT_TRUE(fa_is_free(free_cell));
}

TEST(CoreFunctionalArrays, QueriesMatchOnlyHoldingPieces) {
  const fa_span s{4, 10};
  EXPECT_TRUE(fa_lookup_match(s, 7, 7, 4));
  EXPECT_TRUE(fa_lookup_match(s, 7, 7, 10));
  EXPECT_FALSE(fa_lookup_match(s, 7, 7, 11));
  EXPECT_FALSE(fa_lookup_match(s, 8, 7, 5));
  EXPECT_FALSE(fa_lookup_match(fa_free_cell(), 7, 7, 0));
  EXPECT_TRUE(fa_next_candidate(s, 7, 6, 5).found);
  EXPECT_EQ(fa_next_candidate(s, 7, 6, 5).index, 7);
  EXPECT_FALSE(fa_next_candidate(s, 7, 7, 5).found);
  EXPECT_FALSE(fa_next_candidate(s, 7, 6, 11).found);
  const fa_next_best none{}, three{3, true}, five{5, true};
  EXPECT_EQ(fa_next_combine(none, five).index, 5);
  EXPECT_EQ(fa_next_combine(five, three).index, 3);
  EXPECT_FALSE(fa_next_combine(none, none).found);
  EXPECT_EQ(fa_cells_needed(fa_change::update), 2);
  EXPECT_EQ(fa_cells_needed(fa_change::remove), 1);
}

}  // namespace
}  // namespace gsearch::core
