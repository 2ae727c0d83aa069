package dev.cairn.core.async;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A bug in a promise chain fails its request and is reported; the protocol's own failures are not reported. */
class UnexpectedTest {
    private final List<Throwable> reported = new ArrayList<>();
    private Consumer<Throwable> before;

    @BeforeEach void install() { before = Unexpected.install(reported::add); }

    @AfterEach void restore() { Unexpected.install(before); }

    @Test void aBugInAStepFailsTheChainAndIsReportedOnce() {
        Promise<Integer> p = new Promise<>();
        Promise<Integer> out = p.map(v -> { throw new IllegalStateException("bug"); });
        Promise<Integer> down = out.flatMap(v -> Promise.completed(v + 1)).map(v -> v * 2);
        p.complete(1);
        assertThat(down.isFailed()).isTrue();
        assertThat(down.error()).hasMessage("bug");
        assertThat(reported).hasSize(1);
    }

    /** An Error (an assertion, an OutOfMemoryError) fails the request too: it must never leave a chain unanswered. */
    @Test void anErrorInAStepFailsTheChainInsteadOfEscapingIt() {
        Promise<Integer> p = new Promise<>();
        Promise<Integer> out = p.flatMap(v -> { throw new OutOfMemoryError("simulated"); });
        p.complete(1);
        assertThat(out.isFailed()).isTrue();
        assertThat(reported).singleElement().isInstanceOf(OutOfMemoryError.class);
        Promise<Integer> q = Promise.<Integer>failed(new CairnException(Status.IO, "x")).then((v, e) -> { throw new AssertionError("inv"); });
        assertThat(q.isFailed()).isTrue();
        assertThat(reported).hasSize(2);
    }

    @Test void theProtocolsOwnFailuresAreAnswersNotBugs() {
        Promise<Integer> p = Promise.completed(1);
        Promise<Integer> out = p.map(v -> { throw new CairnException(Status.NOT_FOUND, "no such file"); });
        assertThat(out.isFailed()).isTrue();
        assertThat(reported).isEmpty();
        assertThat(Unexpected.expected(new dev.cairn.core.env.Volume.DiskError("d", "io", null))).isTrue();
        assertThat(Unexpected.expected(new dev.cairn.core.proto.CodecException("bad frame"))).isTrue();
        assertThat(Unexpected.expected(new NullPointerException())).isFalse();
    }

    /** One callback that throws does not keep the others from running; the throwable still reaches the completer. */
    @Test void aThrowingCallbackDoesNotStarveTheOthers() {
        Promise<Integer> p = new Promise<>();
        List<String> ran = new ArrayList<>();
        p.onComplete((v, e) -> { ran.add("a"); throw new IllegalStateException("first"); });
        p.onComplete((v, e) -> ran.add("b"));
        p.onComplete((v, e) -> { ran.add("c"); throw new IllegalStateException("second"); });
        p.onComplete((v, e) -> ran.add("d"));
        assertThatThrownBy(() -> p.complete(1)).hasMessage("first");
        assertThat(ran).containsExactly("a", "b", "c", "d");
    }

    /** A step that throws, or a caller's callback that throws, must not wedge a serial queue. */
    @Test void aSerialQueueKeepsGoingAfterAStepOrACallbackThrows() {
        SerialQueue q = new SerialQueue();
        Promise<Integer> gate = new Promise<>();
        Promise<Integer> first = q.submit(() -> gate);
        first.onComplete((v, e) -> { throw new IllegalStateException("caller's bug"); });
        Promise<Integer> second = q.submit(() -> { throw new AssertionError("step's bug"); });
        Promise<Integer> third = q.submit(() -> Promise.completed(3));
        assertThatThrownBy(() -> gate.complete(1)).hasMessage("caller's bug");
        assertThat(second.isFailed()).isTrue();
        assertThat(third.value()).isEqualTo(3);
        assertThat(q.idle()).isTrue();
        assertThat(reported).singleElement().isInstanceOf(AssertionError.class);
    }
}
