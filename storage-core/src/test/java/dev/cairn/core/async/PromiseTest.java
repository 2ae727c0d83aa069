package dev.cairn.core.async;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PromiseTest {
    @Test void callbacksRunOnceInOrderAndLateCompletionsAreIgnored() {
        Promise<Integer> p = new Promise<>();
        List<String> seen = new ArrayList<>();
        p.onComplete((v, e) -> seen.add("a" + v));
        p.map(v -> v * 2).onSuccess(v -> seen.add("b" + v));
        assertThat(p.complete(3)).isTrue();
        assertThat(p.complete(4)).isFalse();
        assertThat(p.fail(new RuntimeException())).isFalse();
        p.onSuccess(v -> seen.add("c" + v));
        assertThat(seen).containsExactly("a3", "b6", "c3");
    }

    /** The first callback is held apart from the rest: order must not depend on it, nor on a callback added while they run. */
    @Test void manyCallbacksRunInTheOrderAddedAndOneAddedWhileFiringRunsAtOnce() {
        Promise<String> p = new Promise<>();
        List<String> seen = new ArrayList<>();
        p.onComplete((v, e) -> {
            seen.add("1" + v);
            p.onComplete((v2, e2) -> seen.add("inner" + v2));
        });
        for (int i = 2; i <= 4; i++) {
            int n = i;
            p.onComplete((v, e) -> seen.add(n + v));
        }
        p.complete("x");
        assertThat(seen).containsExactly("1x", "innerx", "2x", "3x", "4x");
        Promise<String> f = new Promise<>();
        List<Throwable> errors = new ArrayList<>();
        f.onFailure(errors::add);
        f.onFailure(errors::add);
        f.fail(new IllegalStateException("boom"));
        assertThat(errors).hasSize(2).allMatch(t -> t.getMessage().equals("boom"));
    }

    @Test void failuresPropagateThroughMapAndFlatMapAndThenRecovers() {
        Promise<Integer> p = new Promise<>();
        Promise<Integer> chained = p.map(v -> v + 1).flatMap(v -> Promise.completed(v + 1));
        Promise<String> recovered = chained.then((v, e) -> Promise.completed(e == null ? "ok" : "recovered " + e.getMessage()));
        p.fail(new IllegalStateException("boom"));
        assertThat(chained.isFailed()).isTrue();
        assertThat(recovered.value()).isEqualTo("recovered boom");
    }

    @Test void allWaitsForEveryPromiseAndReportsTheFirstFailure() {
        Promise<Integer> a = new Promise<>(), b = new Promise<>();
        Promise<List<Integer>> all = Promise.all(List.of(a, b));
        b.fail(new IllegalStateException("b"));
        assertThat(all.isDone()).isFalse();
        a.complete(1);
        assertThat(all.error()).hasMessage("b");
        assertThat(Promise.all(List.<Promise<Integer>>of()).value()).isEmpty();
    }

    @Test void serialQueueRunsOneStepAtATime() {
        SerialQueue q = new SerialQueue();
        Promise<Void> first = new Promise<>();
        List<String> order = new ArrayList<>();
        q.submit(() -> { order.add("start1"); return first; }).onSuccess(v -> order.add("end1"));
        q.submit(() -> { order.add("start2"); return Promise.completed(null); }).onSuccess(v -> order.add("end2"));
        assertThat(order).containsExactly("start1");
        first.complete(null);
        assertThat(order).containsExactly("start1", "end1", "start2", "end2");
        assertThat(q.idle()).isTrue();
    }

    @Test void sharedStepsOverlapEachOtherButNeverAnOrdinaryStepAndKeepTheirOrder() {
        SerialQueue q = new SerialQueue();
        List<String> order = new ArrayList<>();
        Promise<Void> write1 = new Promise<>(), read1 = new Promise<>(), read2 = new Promise<>(), write2 = new Promise<>(), read3 = new Promise<>();
        q.submit(() -> { order.add("w1"); return write1; });
        q.submitShared(() -> { order.add("r1"); return read1; });
        q.submitShared(() -> { order.add("r2"); return read2; });
        q.submit(() -> { order.add("w2"); return write2; });
        q.submitShared(() -> { order.add("r3"); return read3; });
        assertThat(order).as("a read waits for the write before it").containsExactly("w1");
        write1.complete(null);
        assertThat(order).as("the reads in a row start together").containsExactly("w1", "r1", "r2");
        read2.complete(null);
        assertThat(order).as("a write waits for every read running").containsExactly("w1", "r1", "r2");
        assertThat(q.idle()).isFalse();
        read1.complete(null);
        assertThat(order).containsExactly("w1", "r1", "r2", "w2");
        write2.complete(null);
        assertThat(order).as("a read after a write waits for it").containsExactly("w1", "r1", "r2", "w2", "r3");
        read3.complete(null);
        assertThat(q.idle()).isTrue();
    }

    @Test void aThrowingStepFailsOnlyItself() {
        SerialQueue q = new SerialQueue();
        Promise<Integer> bad = q.submit(() -> { throw new IllegalArgumentException("x"); });
        Promise<Integer> good = q.submit(() -> Promise.completed(5));
        assertThat(bad.isFailed()).isTrue();
        assertThat(good.value()).isEqualTo(5);
    }
}
