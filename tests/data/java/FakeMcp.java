// Test fixture (default package; compiled by tests/it/support/java.rs with `javac -g --release 17`).
// NOT a debuggee: a tiny scripted MCP server on stdio used only to self-test the test client in
// tests/it/support/mcp.rs without depending on the real jvmscope binary. It reads one JSON-RPC
// message per line and matches fields with regular expressions (no JSON library):
//   initialize            -> result with protocolVersion 2025-06-18 and serverInfo "fake-mcp"
//   notifications/initialized -> a notifications/message notification, "fake-mcp: initialized" on stderr
//   tools/list            -> two pages: tool "echo" (nextCursor "page-2"), then tool "fail"
//   tools/call "echo"     -> text items "echo" and "done", structuredContent {"ok":true}
//   tools/call "fail"     -> isError true, text "it failed"
//   tools/call "silent"   -> no response at all
//   ping-me               -> sends a ping request to the client, answers once the client replies
//   exit                  -> prints "fake-mcp: exiting" on stderr and exits with status 3
//   anything else         -> JSON-RPC error -32601
// Prints "not json" on stdout once, after initialize, to exercise garbage handling.
// Exits 0 at end of stdin.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class FakeMcp {
    static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*(\\d+|\"[^\"]*\")");
    static final Pattern METHOD = Pattern.compile("\"method\"\\s*:\\s*\"([^\"]+)\"");
    static final Pattern NAME = Pattern.compile("\"name\"\\s*:\\s*\"([^\"]+)\"");

    static String find(Pattern p, String line) {
        Matcher m = p.matcher(line);
        return m.find() ? m.group(1) : null;
    }

    static void send(String json) {
        System.out.println(json);
        System.out.flush();
    }

    static void result(String id, String result) {
        send("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":" + result + "}");
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String pendingPing = null;
        String line;
        while ((line = in.readLine()) != null) {
            String id = find(ID, line);
            String method = find(METHOD, line);
            if (method == null) {
                // A response from the client: the answer to our ping.
                if (pendingPing != null && line.contains("\"id\":\"srv-ping\"") && line.contains("\"result\"")) {
                    result(pendingPing, "{\"pong\":true}");
                    pendingPing = null;
                }
                continue;
            }
            switch (method) {
                case "initialize":
                    result(id, "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},"
                            + "\"serverInfo\":{\"name\":\"fake-mcp\",\"version\":\"0\"}}");
                    send("not json");
                    break;
                case "notifications/initialized":
                    System.err.println("fake-mcp: initialized");
                    send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
                            + "\"params\":{\"level\":\"info\",\"data\":\"hello\"}}");
                    break;
                case "tools/list":
                    if (line.contains("page-2")) {
                        result(id, "{\"tools\":[{\"name\":\"fail\",\"inputSchema\":{\"type\":\"object\"}}]}");
                    } else {
                        result(id, "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}],"
                                + "\"nextCursor\":\"page-2\"}");
                    }
                    break;
                case "tools/call": {
                    String name = find(NAME, line);
                    if ("echo".equals(name)) {
                        result(id, "{\"content\":[{\"type\":\"text\",\"text\":\"echo\"},"
                                + "{\"type\":\"text\",\"text\":\"done\"}],\"structuredContent\":{\"ok\":true}}");
                    } else if ("fail".equals(name)) {
                        result(id, "{\"content\":[{\"type\":\"text\",\"text\":\"it failed\"}],\"isError\":true}");
                    } else if (!"silent".equals(name)) {
                        send("{\"jsonrpc\":\"2.0\",\"id\":" + id
                                + ",\"error\":{\"code\":-32602,\"message\":\"unknown tool\"}}");
                    }
                    break;
                }
                case "ping-me":
                    pendingPing = id;
                    send("{\"jsonrpc\":\"2.0\",\"id\":\"srv-ping\",\"method\":\"ping\"}");
                    break;
                case "exit":
                    System.err.println("fake-mcp: exiting");
                    System.exit(3);
                    break;
                default:
                    if (id != null) {
                        send("{\"jsonrpc\":\"2.0\",\"id\":" + id
                                + ",\"error\":{\"code\":-32601,\"message\":\"no such method\"}}");
                    }
            }
        }
    }
}
