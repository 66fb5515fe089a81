// Flight Recorder files -> tables of stack samples and GC pauses (cassperf.parsers.jfr).
//
// A report reads hundreds of runs: one JVM start per file would add minutes, so this converts
// every file it is given in one JVM. Run in source-file mode: java JfrSamples.java
//
// stdin, one file per line, tab-separated:  jfr_path  out_prefix
// For each, it writes (UTF-8, tab-separated, no header):
//   out_prefix.samples.tsv   state  thread  stack_id  epoch_ns       one row per stack sample
//                            state: J (jdk.ExecutionSample: the thread ran Java code)
//                                   N (jdk.NativeMethodSample: the thread was in a native method)
//   out_prefix.stacks.tsv    stack_id  frames                         frames root->leaf, ';'-joined,
//                            package.Class.method; "[truncated]" first when the JVM cut the stack
//   out_prefix.gc.tsv        event  name  cause  epoch_ns  duration_ns
//                            jdk.GCPhasePause: one pause; jdk.GarbageCollection: one collection,
//                            duration = its sum of pauses
// and answers on stdout, one line per file, in order:
//   OK <tab> index <tab> samples <tab> gc_rows <tab> execution sample period (e.g. "20 ms", "" unknown)
//   ERR <tab> index <tab> why            (a file that is not a whole Flight Recorder file)
// Tabs and newlines in thread names become spaces. Generated lambda classes lose their numbers
// and addresses (Foo$$Lambda$96+0x00007f35f801ee70.1169794610 -> Foo$$Lambda, LambdaForm$MH+0x... ->
// LambdaForm$MH), which differ from one JVM start to the next.

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import jdk.jfr.EventType;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

public class JfrSamples {
    // Foo$$Lambda$96+0x00007f35f801ee70.1169794610 (hidden class; /0x... in other JDKs)
    static final Pattern LAMBDA = Pattern.compile("\\$\\$Lambda\\$\\d+(?=[+/]0x)");
    // LambdaForm$MH+0x0000000800c4b6a8, ...+0x00007f35f801ee70.1169794610
    static final Pattern HIDDEN = Pattern.compile("[+/]0x[0-9a-f]+(\\.\\d+)?");

    public static void main(String[] argv) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        int index = 0;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            String[] f = line.split("\t", -1);
            String out;
            try {
                out = "OK\t" + index + "\t" + convert(Path.of(f[0]), f[1]);
            } catch (Throwable e) {
                Throwable t = e;
                while (t.getCause() != null) t = t.getCause();
                String why = t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
                out = "ERR\t" + index + "\t" + oneLine(why);
            }
            System.out.println(out);
            System.out.flush();
            index++;
        }
    }

    static String convert(Path jfr, String prefix) throws IOException {
        Map<RecordedStackTrace, Integer> seen = new IdentityHashMap<>();
        Map<String, Integer> ids = new HashMap<>();
        Map<Long, String> typeNames = new HashMap<>();
        String period = "";
        long samples = 0, gc = 0;
        try (RecordingFile file = new RecordingFile(jfr);
             BufferedWriter rows = Files.newBufferedWriter(Path.of(prefix + ".samples.tsv"), StandardCharsets.UTF_8);
             BufferedWriter stacks = Files.newBufferedWriter(Path.of(prefix + ".stacks.tsv"), StandardCharsets.UTF_8);
             BufferedWriter pauses = Files.newBufferedWriter(Path.of(prefix + ".gc.tsv"), StandardCharsets.UTF_8)) {
            for (EventType type : file.readEventTypes()) typeNames.put(type.getId(), type.getName());
            while (file.hasMoreEvents()) {
                RecordedEvent e = file.readEvent();
                String name = e.getEventType().getName();
                switch (name) {
                    case "jdk.ExecutionSample":
                    case "jdk.NativeMethodSample": {
                        RecordedStackTrace trace = e.getStackTrace();
                        if (trace == null) break;
                        Integer id = seen.get(trace);
                        if (id == null) {
                            String frames = frames(trace);
                            id = ids.get(frames);
                            if (id == null) {
                                id = ids.size();
                                ids.put(frames, id);
                                stacks.write(id + "\t" + frames + "\n");
                            }
                            seen.put(trace, id);
                        }
                        RecordedThread thread = e.getThread("sampledThread");
                        String threadName = thread == null ? "" : thread.getJavaName();
                        if (threadName == null) threadName = thread.getOSName();
                        rows.write((name.equals("jdk.ExecutionSample") ? "J" : "N") + "\t" + oneLine(threadName) + "\t"
                                   + id + "\t" + nanos(e.getStartTime()) + "\n");
                        samples++;
                        break;
                    }
                    case "jdk.GCPhasePause":
                        pauses.write(name + "\t" + oneLine(e.getString("name")) + "\t\t" + nanos(e.getStartTime()) + "\t"
                                     + e.getDuration().toNanos() + "\n");
                        gc++;
                        break;
                    case "jdk.GarbageCollection":
                        pauses.write(name + "\t" + oneLine(e.getString("name")) + "\t" + oneLine(e.getString("cause"))
                                     + "\t" + nanos(e.getStartTime()) + "\t" + e.getDuration("sumOfPauses").toNanos()
                                     + "\n");
                        gc++;
                        break;
                    case "jdk.ActiveSetting":
                        if ("jdk.ExecutionSample".equals(typeNames.get(e.getLong("id"))) && "period".equals(e.getString("name")))
                            period = oneLine(e.getString("value"));
                        break;
                    default:
                        break;
                }
            }
        }
        return samples + "\t" + gc + "\t" + period;
    }

    static String frames(RecordedStackTrace trace) {
        List<RecordedFrame> frames = trace.getFrames();
        StringBuilder b = new StringBuilder();
        if (trace.isTruncated()) b.append("[truncated]");
        for (int k = frames.size() - 1; k >= 0; k--) {
            RecordedMethod m = frames.get(k).getMethod();
            if (b.length() > 0) b.append(';');
            if (m == null) {
                b.append("[unknown]");
                continue;
            }
            String type = m.getType() == null ? "[unknown]" : m.getType().getName();
            type = HIDDEN.matcher(LAMBDA.matcher(type).replaceAll("\\$\\$Lambda")).replaceAll("");
            b.append(type).append('.').append(m.getName());
        }
        return oneLine(b.toString());
    }

    static long nanos(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    static String oneLine(String s) {
        return s == null ? "" : s.replace('\n', ' ').replace('\t', ' ').replace('\r', ' ');
    }
}
