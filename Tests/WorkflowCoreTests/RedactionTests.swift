import WorkflowCore
import XCTest

/// Log tails, error messages and shell metrics go through `Redaction` before they are stored or
/// shown: TEST PLAN §12 "no raw media logged; PII scrubbed", step 13 of the implementation plan
/// ("RedactionTests: crash sample shows no sensitive fields").
final class RedactionTests: XCTestCase {
    private func r(_ s: String) -> String { Redaction.redact(s) }

    // MARK: Already handled

    func testDataURIsAndLongBase64RunsBecomeMedia() {
        XCTAssertEqual(r("got data:image/png;base64,iVBORw0KGgo= ok"), "got [media] ok")
        XCTAssertEqual(r("thumb iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"), "thumb [media]")
        XCTAssertEqual(r("thumb iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk."), "thumb [media].")
        XCTAssertEqual(r("short abc123=="), "short abc123==", "short tokens are not media")
    }

    func testEmailAddressesBecomeEmailAndKeepTheirPunctuation() {
        XCTAssertEqual(r("user jane@example.com uploaded"), "user [email] uploaded")
        XCTAssertEqual(r("to jane@example.com, bob@example.org."), "to [email], [email].")
        XCTAssertEqual(r("(jane.doe+tag@mail.example.co.uk)"), "([email])")
    }

    func testAddressesAndNumbersJoinedToOtherTextByPunctuationAreRedactedToo() {
        XCTAssertEqual(r("sending to alice@example.com;bob@example.com"), "sending to [email];[email]")
        XCTAssertEqual(r("to:a@x.com,b@x.com"), "to:[email],[email]")
        // One address joined to a key keeps the key, as several do (the key is not the address).
        XCTAssertEqual(r("to=a@x.com"), "to=[email]")
        XCTAssertEqual(r("to=<a@x.com>"), "to=<[email]>")
        XCTAssertEqual(r("reply-to:jane@example.com."), "reply-to:[email].")
        XCTAssertEqual(r("Alice Smith <alice@example.com>"), "Alice Smith <[email]>")
        XCTAssertEqual(r("phone:+14155550100"), "phone:[phone]")
        XCTAssertEqual(r("tel=415-555-0100,"), "tel=[phone],")
        XCTAssertEqual(r("key=value;mode=fast"), "key=value;mode=fast", "nothing personal: unchanged")
        XCTAssertEqual(r("t=2026-01-01T00:00:30.000Z"), "t=2026-01-01T00:00:30.000Z")
        XCTAssertEqual(r("call:(415)555-0100"), "call:[phone]")
        XCTAssertEqual(r("mobile=4155550100"), "mobile=[phone]", "named so")
        // Digits joined to other text are usually ids, sizes, times or versions: kept.
        for line in ["pid=123456789", "bytes=104857600", "ts=1712345678123", "ip=192.168.100.200",
                     "version=2024.10.15.1234", "[12:00:00.123456789]", "https://x.com/items(123456789)",
                     "deps=pkg@1.2.3,b@2.0.0", "job-123456789"] {
            XCTAssertEqual(r(line), line)
        }
    }

    func testPhoneNumbersWrittenAsOneWordBecomePhone() {
        XCTAssertEqual(r("call +14155550100 now"), "call [phone] now")
        XCTAssertEqual(r("call 415-555-0100"), "call [phone]")
        XCTAssertEqual(r("call 415.555.0100."), "call [phone].")
    }

    func testMediaFileNamesBecomeFile() {
        XCTAssertEqual(r("uploaded IMG_0042.HEIC"), "uploaded [file]")
        XCTAssertEqual(r("read /Users/alice/Pictures/beach.jpg"), "read [file]", "the whole path goes with the name")
        XCTAssertEqual(r("wrote out-1.webp and clip.mp4"), "wrote [file] and [file]")
    }

    func testOrdinaryWordsStayAsTheyAre() {
        let lines = ["step 12/30", "loading model sdxl-turbo v1.2", "eta 40 s", "res 1024 1024 steps 30",
                     "2026-01-01 12:00:05 done", "took 1.5 s at 2026-01-01T00:00:30.000Z", "notes.txt saved",
                     "GET https://api.example.com/v1/jobs 200", "see /srv/home/shared/config.yaml", "progress 10 20 30 40 50",
                     // 40 letters and no digit is a (German, chemical, …) word, not base64; an
                     // address needs a dot in its domain.
                     "Rindfleischetikettierungsueberwachungsaufgaben", "mail root@localhost now"]
        for line in lines { XCTAssertEqual(r(line), line) }
    }

    func testLinesAreCutAt500Characters() {
        let line = String(repeating: "word ", count: 200)
        let out = r(line)
        XCTAssertEqual(out.count, 501)
        XCTAssertTrue(out.hasSuffix("…"))
    }

    // MARK: Media file names followed by punctuation

    func testMediaFileNamesFollowedByPunctuationBecomeFileAndKeepThePunctuation() {
        XCTAssertEqual(r("saved photo.jpg, then"), "saved [file], then")
        XCTAssertEqual(r("(see clip.mov)"), "(see [file])")
        XCTAssertEqual(r("wrote a.png."), "wrote [file].")
        XCTAssertEqual(r("is it 'beach.JPEG'?"), "is it '[file]'?")
        XCTAssertEqual(r("files: a.png; b.gif! [c.tiff]"), "files: [file]; [file]! [[file]]")
    }

    // MARK: URLs with a query or a fragment

    func testMediaURLsWithAQueryOrFragmentAreRedactedWhole() {
        let out = r("fetch https://cdn.example.com/out/beach.png?X-Amz-Signature=abc123secret&expires=99#preview done")
        XCTAssertEqual(out, "fetch [file] done")
        XCTAssertFalse(out.contains("secret"))
        XCTAssertEqual(r("file:///Users/alice/Movies/clip.mov#t=10,"), "[file],")
    }

    func testMediaFileNamesWithAQueryAreFileAlsoWhenNotAURL() {
        // A bare name or a relative path to a media file, with a query or a fragment: the query's
        // token goes with the name.
        XCTAssertEqual(r("got out/beach.png?sig=abc"), "got [file]")
        XCTAssertEqual(r("got beach.png?sig=abc, then clip.MOV#t=3."), "got [file], then [file].")
        XCTAssertEqual(r("see report.txt?v=2"), "see report.txt?v=2", "not a media file")
    }

    func testURLsCarryingTokensAreRedactedWhole() {
        let out = r("GET https://api.example.com/v1/jobs/42?token=s3cr3t&user=jane then")
        XCTAssertEqual(out, "GET [url] then")
        XCTAssertFalse(out.contains("s3cr3t"))
        XCTAssertEqual(r("see https://example.com/docs#section-2."), "see [url].")
        XCTAssertEqual(r("proxy https://bob:hunter2@proxy.example.com/ up"), "proxy [url] up")
        XCTAssertEqual(r("callback /hooks/done?sig=abcdef"), "callback [url]")
    }

    // MARK: Phone numbers across words

    func testPhoneNumbersWrittenAcrossWordsBecomePhone() {
        XCTAssertEqual(r("call +1 415 555 0100 now"), "call [phone] now")
        XCTAssertEqual(r("call (415) 555-0100."), "call [phone].")
        XCTAssertEqual(r("call (415)555-0100"), "call [phone]")
        XCTAssertEqual(r("call 415 555 0100"), "call [phone]")
        XCTAssertEqual(r("call 415 555-0100 or +44 20 7946 0958"), "call [phone] or [phone]")
        XCTAssertEqual(r("call +1 (415) 555-0100"), "call [phone]")
        XCTAssertEqual(r("tel:+33 1 23 45 67 89"), "tel:[phone]")
    }

    func testAPhoneNumberAcrossWordsLeavesTheWordsAfterIt() {
        XCTAssertEqual(r("call 415 555 0100 2 times"), "call [phone] 2 times")
        XCTAssertEqual(r("+1 415 555 0100, ext 12"), "[phone], ext 12")
    }

    // MARK: Home directories

    func testHomeDirectoryUserNamesAreRedacted() {
        XCTAssertEqual(r("reading /Users/alice/Documents/notes.txt"), "reading /Users/[user]/Documents/notes.txt")
        XCTAssertEqual(r("cwd=/home/bob/projects"), "cwd=/home/[user]/projects")
        XCTAssertEqual(r("cache in /home/bob"), "cache in /home/[user]")
        XCTAssertEqual(r(#"wrote C:\Users\carol\AppData\run.log"#), #"wrote C:\Users\[user]\AppData\run.log"#)
        XCTAssertEqual(r(#"c:\users\Carol\x.txt"#), #"c:\users\[user]\x.txt"#)
        XCTAssertEqual(r("C:/Users/carol/x.txt"), "C:/Users/[user]/x.txt")
        XCTAssertEqual(r("open file:///Users/alice/notes.txt"), "open file:///Users/[user]/notes.txt")
        XCTAssertEqual(r("(/home/dave)"), "(/home/[user])")
        for line in ["/Users/alice/a.txt", "/home/bob/b", #"C:\Users\carol\c"#] {
            XCTAssertFalse(["alice", "bob", "carol"].contains { r(line).contains($0) }, line)
        }
    }

    func testRepeatedSlashesAroundAHomeDirectoryHideNoUserName() {
        XCTAssertEqual(r("cwd=//home/bob/projects"), "cwd=//home/[user]/projects")
        XCTAssertEqual(r("//Users/alice"), "//Users/[user]")
        XCTAssertEqual(r("/home//bob/x"), "/home//[user]/x")
        XCTAssertEqual(r("open file:////Users//alice/notes.txt"), "open file:////Users//[user]/notes.txt")
        XCTAssertEqual(r("/home//"), "/home//")
    }

    func testAHostNamedHomeIsNotAHomeDirectory() {
        XCTAssertEqual(r("GET https://home/users/x"), "GET https://home/users/x")
        XCTAssertEqual(r("see http://users/bob"), "see http://users/bob")
    }

    func testHomeLikeFoldersDeeperInAPathAreNotUserNames() {
        XCTAssertEqual(r("/srv//home/shared/x"), "/srv//home/shared/x")
        XCTAssertEqual(r("/srv/home/shared/x"), "/srv/home/shared/x")
        XCTAssertEqual(r("/homework/x"), "/homework/x")
        XCTAssertEqual(r("https://example.com/home/page"), "https://example.com/home/page")
    }

    // MARK: Pinned by mutation testing

    func testADataURIIsMediaWhereverItStartsAndWhateverItsEncoding() {
        XCTAssertEqual(r("src=data:image/png;base64,iVBORw0KGgo="), "[media]", "joined to other text")
        XCTAssertEqual(r("body data:text/plain;charset=utf-8,dear%20jane end"), "body [media] end", "percent-encoded, not base64")
    }

    func testABase64RunOf40CharactersIsMediaAndOneOf39IsNot() {
        XCTAssertEqual(r("hash 0123456789abcdef0123456789abcdef01234567"), "hash [media]")
        XCTAssertEqual(r("hash 0123456789abcdef0123456789abcdef0123456"), "hash 0123456789abcdef0123456789abcdef0123456")
    }

    func testAPDFFileNameIsAMediaFileName() {
        XCTAssertEqual(r("attached scan-2026.pdf, done"), "attached [file], done")
        XCTAssertEqual(r("open /Users/alice/Documents/Passport.PDF"), "open [file]")
    }

    func testAMediaFileNameFollowedByAnEllipsisOrInAngleBracketsKeepsThePunctuation() {
        XCTAssertEqual(r("uploading photo.jpg…"), "uploading [file]…")
        XCTAssertEqual(r("attachment <photo.jpg>"), "attachment <[file]>")
    }

    func testALineOfExactly500CharactersIsNotCut() {
        let line = String(repeating: "abcd ", count: 100)
        XCTAssertEqual(line.count, 500)
        XCTAssertEqual(r(line), line)
        XCTAssertEqual(r(line + "x"), line + "…")
    }

    func testPhoneNumbersJoinedToOtherTextWrittenAsPhoneNumbersAreRedacted() {
        XCTAssertEqual(r("to=+14155550100"), "to=[phone]", "a leading +")
        XCTAssertEqual(r("contact=415-555-0100"), "contact=[phone]", "the grouping of a national number")
        XCTAssertEqual(r("ip=415.555.0100"), "ip=415.555.0100", "never dots alone: those are addresses and versions")
    }

    func testEveryKeyNamingAPhoneNumberIsRecognised() {
        XCTAssertEqual(r("fax=4155550100"), "fax=[phone]")
        XCTAssertEqual(r("phone_number=4155550100"), "phone_number=[phone]")
        XCTAssertEqual(r("Tel:4155550100"), "Tel:[phone]")
    }

    func testAOneWordPhoneNumberHas9To15Digits() {
        XCTAssertEqual(r("call 123456789012345"), "call [phone]")
        XCTAssertEqual(r("call 1234567890123456"), "call 1234567890123456")
        XCTAssertEqual(r("call 123456789"), "call [phone]")
        XCTAssertEqual(r("call 12345678"), "call 12345678")
    }

    func testNationalAndInternationalPhoneShapesAcrossWords() {
        XCTAssertEqual(r("call 1 415 555 0100"), "call [phone]")
        XCTAssertEqual(r("call 0161 496 0000"), "call [phone]")
        XCTAssertEqual(r("call 020 7946 0958"), "call [phone]")
        XCTAssertEqual(r("call +353 1 234 5678"), "call [phone]", "a three-digit country code")
    }

    func testAddressesJoinedByAVerticalBarAreRedacted() {
        XCTAssertEqual(r("cc=alice@x.com|bob@x.com"), "cc=[email]|[email]")
    }

    func testAHomeDirectoryUserNameEndsAtACommaAndMayBeOneLetter() {
        XCTAssertEqual(r("in /home/bob, then"), "in /home/[user], then")
        XCTAssertEqual(r("cd /home/x"), "cd /home/[user]")
    }

    func testARelativePathWithAQueryIsRedactedWholeLikeAURL() {
        XCTAssertEqual(r("callback ./hooks/done?sig=abcdef"), "callback [url]")
        XCTAssertEqual(r("open ~/share?token=s3cr3t"), "open [url]")
    }

    func testRedactStringsKeepsKeysAsTheyAre() {
        let value: JSON = ["IMG_0042.HEIC": "IMG_0042.HEIC", "nested": ["jane@example.com": ["jane@example.com", 7]]]
        XCTAssertEqual(Redaction.redactStrings(value),
                       ["IMG_0042.HEIC": "[file]", "nested": ["jane@example.com": ["[email]", 7]]])
    }
}
