package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The usual commit time follows recent commits, and an idle transaction does not drag it far. */
class UsualCommitTimeTest {
    @Test
    void overrunIsMeasuredAgainstTheAverageOfTheCommitsBefore() {
        UsualCommitTime usual = new UsualCommitTime();
        assertEquals(0, usual.overrun(1_000_000), "the first commit sets the average");
        for (int i = 0; i < 100; i++) {
            assertEquals(0, usual.overrun(1_000_000));
        }
        assertEquals(4_000_000, usual.overrun(5_000_000));
        assertEquals(0, usual.overrun(500_000), "a quick commit did not overrun");
    }

    @Test
    void aTransactionLeftOpenCountsAtMostTwiceTheAverage() {
        UsualCommitTime usual = new UsualCommitTime();
        for (int i = 0; i < 100; i++) {
            usual.overrun(1_000_000);
        }
        assertTrue(usual.overrun(60_000_000_000L) > 0);
        // Counted as 2 ms, the average rose by 1/16 of a millisecond, not by seconds.
        long overrun = usual.overrun(2_000_000);
        assertTrue(overrun > 800_000 && overrun < 1_000_000, "average now about 1.06 ms: overrun " + overrun);
    }
}
