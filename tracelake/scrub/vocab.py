"""Vocabulary for the fail-closed free-text pass (:mod:`tracelake.scrub.freetext`).

These are allow-lists: a word missing here is replaced by a placeholder (a loss for the
learner, never a leak). Words that are also common given names or surnames in English,
German or French (Will, Mark, Rose, Young, King, Green, May, June, ...) are left out on
purpose: a run of capitalised words is kept only if every word is here.
"""

from __future__ import annotations

import gzip
from http import HTTPStatus
from pathlib import Path

# English function words, verbs and nouns that start sentences in goals, messages and
# errors, plus HTTP reason phrases and common technical and commerce words.
_EN = """
a about above accept accepted access account accounts action active add added address after again
against agent all allowed already also always am an and another answer any api app application
apply approval approved are as ask asked asking at attempt attempts auth authentication
authorization authorized available back bad balance bank be because been before being below
between billing body both box but buy by cache call called cancel canceled cancelled cannot card
cart case change changed changes charge charged check checkout claim client close closed code
collect complete completed confirm confirmed conflict connection contact content continue could
count coupon create created credit currency current customer customers data date day days
declined default delete deleted delivered delivery deny denied detail details did disabled do
does done down due during each edit email empty enabled end error errors even event every
exception exchange expected expired export failed failure fetch field file find first fix for
forbidden found free from full gateway get give go goods got had has have header hello help here
hi how id if in info information internal invalid invoice is it item items its just keep key
know last later let limit line list load locked log login logout look made mail make many
manual may-not me message method missing more most move must my name need new next no
none not note notice notification now null number of off ok okay old on once one only open or
order ordered orders other our out over page paid parameter params partial pay payment pending
per permission phone please point points post price process processed processing product
products profile provide provided push put query queue quota rate read ready reason received
receipt record redirect refund refunded refunds reject rejected remove removed replace reply
request requested requests required reset resource response result results retry return
returned returns review run same save search see send sent server service session set ship
shipment shipped shipping should show sign since size skip so some sorry start started status
step still stock stop store submit success successful summary support sure system take task
tax than thank thanks that the their them then there these they this those through ticket time
timeout to today token too tool total track tracking transfer try type unable unauthorized
unavailable under unknown unprocessable until up update updated upload us usage use used user
valid validation value verify version via view wait want was we were what when where which
while who why with within without would write wrong yes yesterday you your
monday tuesday wednesday thursday friday saturday sunday january february march july september
october november december
http https json xml html url uri get head options patch trace connect utf
error exception warning traceback file line module
cookie set bearer basic authorization content accept agent host origin referer location
forwarded encoding length language control cache allow vary expect range etag www authenticate
retry after proxy upgrade via warning strict transport security frame policy csrf xsrf
api sdk cli ui id ip tls ssl dns tcp udp sql db os aws gcp azure s3 ec2 iam
tel fax mobile mob cell hp ph no nr path domain secure httponly samesite expires max age lax
password passwd pwd server database uid x dsn driver port timeout pool host user auth token
"""
# Services, brands, carriers and large cities that agents' text names all the time and that
# are not given names or surnames: every word that is a first or last name in any of Faker's
# locales was taken out (Claude, Sydney, London, Phoenix, Lotte, Zara, ...), and so were
# romanised surnames (Hong, Kong).
_NAMED_THINGS = """
stripe paypal shopify amazon aws google gmail youtube apple iphone ipad macbook microsoft
windows azure github gitlab slack discord notion figma jira confluence atlassian salesforce
zendesk intercom twilio sendgrid mailgun auth0 cloudflare vercel netlify heroku docker
kubernetes postgres postgresql mysql redis mongodb kafka elasticsearch openai anthropic
chatgpt gemini llama mistral naver kakao kakaotalk coupang gmarket auction 11st tmon wemakeprice
baemin yogiyo toss tosspayments nicepay inicis danal samsung galaxy lg hyundai sk kt
shinsegae emart homeplus cj hanjin logen epost fedex ups dhl usps tnt ems sagawa yamato
visa mastercard amex jcb unionpay alipay wechat rakuten ebay etsy walmart target costco
ikea nike adidas uniqlo airwrap sony nintendo playstation xbox netflix spotify uber
lyft airbnb booking expedia
seoul busan incheon daegu daejeon gwangju ulsan suwon seongnam jeju gangnam pangyo tokyo osaka
kyoto yokohama beijing shanghai shenzhen guangzhou taipei singapore bangkok hanoi
jakarta melbourne berlin munich frankfurt amsterdam barcelona rome
vienna zurich geneva brussels stockholm oslo copenhagen helsinki dublin moscow istanbul
dubai mumbai delhi bangalore toronto vancouver montreal chicago boston seattle dallas
miami denver angeles
korea japan china taiwan usa america canada mexico brazil germany italy uk
britain england europe
ultra pro plus mini lite max air edition series model
"""
# Faker's common English words that are nobody's name (data/en_words.txt.gz, written by
# tracelake.scrub.lexicon_build)
_EN_FILE = Path(__file__).with_name("data") / "en_words.txt.gz"
_EN_MORE = gzip.decompress(_EN_FILE.read_bytes()).decode("utf-8")
# The words of HTTP reason phrases (Unprocessable Entity, Precondition Failed) and of SQL and
# log messages, imperatives that start an agent's goal, month abbreviations (not Jan, Mar and
# Sep: given names in Faker's locales)
_HTTP = " ".join(status.phrase for status in HTTPStatus).lower().replace("-", " ")
_TECH = """
select insert into values delete from where join inner outer left right group having limit
duplicate entry constraint violates violation foreign primary unique null integrity relation
column table schema index syntax near deadlock detected rollback commit transaction savepoint
summarize summarise list show find fetch lookup look explain describe compare translate draft
reply respond notify escalate assign schedule cancel refund reissue resend verify validate
dear regards sincerely best hello hi thanks thank kind greetings subject attached please
warn warning fatal critical debug trace stack traceback caused raised unhandled
feb apr jun jul aug sept oct nov dec am pm utc kst gmt
sku skus ean upc isbn gtin
"""
# Titles belong to the name they precede: "Mr [PERSON]" and "[PERSON]" would make two query
# families of one goal.
_TITLES = frozenset(["mr", "mrs", "ms", "miss", "mx", "dr", "sir", "madam", "prof"])
# Romanised Korean and Chinese surnames that are also English words (SONG MIN-JUN, SUN
# CHIH-MING, FAN YU-TING): never common, so a name in capitals is not split at them.
_SURNAME_WORDS = (
    "song son ban won sun long fan mo hu gu lu ma bai yang wang li lin ye yu ko moon kang gang "
    "bang jang chang tang pan shin sin nam han hang yoon yin"
)
_ROMANISED_SURNAMES = frozenset(_SURNAME_WORDS.split())
COMMON_WORDS = frozenset(
    w
    for w in (_EN + _NAMED_THINGS + _EN_MORE + _HTTP + _TECH).split()
    if "-" not in w and w not in _TITLES and w not in _ROMANISED_SURNAMES
)

# Lower-case words that join the parts of a name or an address ("Anne de la Tour",
# "12, rue de la Paix", "Flat 3, Baker lane").
_PARTICLES = """de la le du des da di del della van von der den ter zu bin ibn al el y e ob am an im
sur sous lès les upon"""
NAME_PARTICLES = frozenset(_PARTICLES.split())
_STREETS = """rue avenue allée allee chemin boulevard bd impasse place quai route cours passage square
    street st road rd lane ln drive court ct way avenue ave crescent close crossing grove
    park parks hill mews row terrace walk gardens green view villages village plaza suite apt
    unit flat studio floor fl po box strasse straße str weg gasse platz ring allee"""
STREET_WORDS = frozenset(_STREETS.split())

# Korean surnames: single syllables (the national census lists about 280 surnames; these
# cover all but a few thousand people) and the two-syllable ones.
KO_SURNAMES_1 = frozenset(
    "김이박최정강조윤장임림한오서신권황안송전홍유류고문양량손배백허남심노로하곽성차주우구민나라"
    "진지엄채원천방공현함변염렴여려추도소석선설마길연위표명기반왕금옥육인맹제모탁국어은편용예"
    "경봉사부가복태목형피두감음빈동온호범좌팽승간상시갈단견당화창옹순빙종풍묵근야후점흥필뇌초"
    "저대환운곡판즙돈내수뢰교란자학궁평미삼십영개준매아탄해계낭묘포요리"
)
KO_SURNAMES_2 = frozenset(
    ["남궁", "황보", "제갈", "사공", "선우", "서문", "독고", "동방", "어금", "망절"]
)

# After a person label, capitalised words that end in one of these name a role, a team or a
# thing, not a person (Customer Service Team, From: Billing Department, Client: Mobile App);
# with one of PHRASE_WORDS they make a phrase (User Not Found). Used by scrub.latin.
_ROLE_HEADS = """team record records updated string value network plan plans profile settings data details
segment tier portal request requests order orders status type level teams department dept
manager managers customer customers service services support care center centre desk office
group staff agent agents admin administrator bot system app application user users account
address number name id info information portal api client server unit division operations
ops sales billing member members partner partners vendor company inc ltd llc corp store shop
rejected found error failed required"""
ROLE_HEADS = frozenset(_ROLE_HEADS.split())
PHRASE_WORDS = frozenset(
    [
        "not",
        "no",
        "the",
        "of",
        "and",
        "or",
        "for",
        "to",
        "in",
        "on",
        "at",
        "by",
        "with",
        "from",
        "is",
        "are",
        "was",
    ]
)
