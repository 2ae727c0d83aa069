package dev.cairn.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import de.thetaphi.forbiddenapis.Checker;
import de.thetaphi.forbiddenapis.ForbiddenApiException;
import de.thetaphi.forbiddenapis.Logger;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Proves the build check can fail: the signatures the build applies to node code (forbiddenapis, bound to
 * process-classes in every node module) refuse a class that reads the system clock, and accept the
 * master's own classes.
 */
class EnvRuleCheckTest {
    static Path signatures() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path s = p.resolve("build-support/node-forbidden-apis.txt");
            if (Files.isRegularFile(s)) return s;
        }
        throw new IllegalStateException("build-support/node-forbidden-apis.txt not found above " + Path.of("").toAbsolutePath());
    }

    static final class Collect implements Logger {
        final List<String> errors = new ArrayList<>();
        @Override public void error(String msg) { errors.add(msg); }
        @Override public void warn(String msg) { }
        @Override public void info(String msg) { }
        @Override public void debug(String msg) { }
    }

    static Checker checker(Collect log) throws Exception {
        Checker c = new Checker(log, EnvRuleCheckTest.class.getClassLoader(), Checker.Option.FAIL_ON_VIOLATION);
        c.parseSignaturesFile(signatures().toFile());
        return c;
    }

    @Test void aPlantedClockReadFailsTheCheck() throws Exception {
        Collect log = new Collect();
        Checker c = checker(log);
        String name = "dev/cairn/master/planted/PlantedClockUse.class";
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(name)) {
            c.addClassToCheck(in, name);
        }
        assertThatThrownBy(c::run).isInstanceOf(ForbiddenApiException.class);
        assertThat(String.join("\n", log.errors)).contains("java.lang.System#currentTimeMillis()").contains("Env.clock()");
    }

    static final Path RATIS_BINDING = Path.of("dev/cairn/master/ratis");

    @Test void theMastersOwnClassesPass() throws Exception {
        Collect log = new Collect();
        Checker c = checker(log);
        Path classes = Path.of("target/classes");
        List<Path> files;
        try (Stream<Path> s = Files.walk(classes)) {
            // the Apache Ratis binding runs Ratis's own threads: exempt, like the real runtime (master/pom.xml)
            files = s.filter(p -> p.toString().endsWith(".class") && !classes.relativize(p).startsWith(RATIS_BINDING)).toList();
        }
        assertThat(files).isNotEmpty();
        assertThat(files).as("the consensus seam itself is node code, checked").anyMatch(p -> p.endsWith("ReplicaMetaLog.class"));
        for (Path p : files) {
            try (InputStream in = Files.newInputStream(p)) {
                c.addClassToCheck(in, classes.relativize(p).toString());
            }
        }
        c.run();
        assertThat(log.errors).isEmpty();
    }
}
