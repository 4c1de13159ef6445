"""Formulas the tests share: the paper's appendix and FOLIO's known-malformed strings."""

from __future__ import annotations

# Every formula printed in the appendix tables of ../shared/paper/FORTE.tex, transcribed
# to Unicode (prompt example, verbaliser patterns, grammar rules, fallback, qualitative
# examples).
PAPER_FORMULAS = [
    "∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Morning(t)]",
    "∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Soft(x) ∧ Outdoor(t) ∧ Peaceful(x)]",
    "∃X ∃t [Flock(X) ∧ ∀x∈X Bird(x) ∧ Chirping(x) ∧ Morning(t)]",
    "∃x [Bird(x) ∧ DistressCall(x) ∧ HighPitch(x) ∧ Loud(x)]",
    "∃x [Bird(x) ∧ AlarmCall(x) ∧ RapidBurst(x)]",
    "∃x [Bird(x) ∧ Squawking(x) ∧ Aggressive(x)]",
    "∃t T(t) ∧ P(x) ∧ ¬Q(x) ∧ R(x, y)",
    "P(x) ∧ ¬Q(x) ∧ R(x, y)",
    "∃t T(t) ∧ P(x) ∧ Q(x)",
    "P(x) ∧ ¬Q(x)",
    "P(x) ∧ R(x, y)",
    "R(x, y)",
    "P(x) ∧ Q(x)",
    "¬P(x)",
    "P(x)",
    "∃x [Entity(x) ∧ Event(x)]",
    "AcousticProp(x)",
    "Manner(x)",
    "P1(x) ∧ P2(x)",
    "CompoundEvent(x)",
    "∃y [SecondEvent(y) ∧ Assoc(x, y)]",
    "∃x RootEvent(x)",
    "Quiet(x) ∧ Speaking(x)",
    "¬Shouting(x)",
    "Background(speech, crowd_noise)",
    "Wind(x) ∧ Blowing(x)",
    "Wind(x) ∧ Blowing(x) ∧ ¬Rain(y) ∧ ¬Wet(x)",
    "Rain(x) ∧ Falling(x)",
    "Rain(x) ∧ Falling(x) ∧ On(x, MetalRoof(y)) ∧ Metallic(z)",
    "Footsteps(x) ∧ Quiet(x) ∧ Empty(y) ∧ In(x, y) ∧ ¬Crowd(z) ∧ ¬Loud(x)",
    "Machinery(x) ∧ Humming(x) ∧ Interference(y)",
]

# The FOLIO train premises that are malformed as written, and why. The test asserts
# that exactly these (and nothing else) raise FormulaSyntaxError.
FOLIO_MALFORMED = {
    "": "empty string",
    "(WorkTeams(kat) ∧ Tired(kat)) ∨ ¬WorkTeams(kat) ∧ ¬Tired(kat))": "one ')' too many",
    "Code(burger) ∧ Mac(burger))": "one ')' too many",
    "Luxury(Jess) ⊕ Miserly(Jess)) →  Luxury(Jess)": "one ')' too many",
    "¬WorkAtPool(mary))": "one ')' too many",
    "∀x ((Orlando(x) ∨ Miami(x)) ∧ Florida(x)) → WantToGo(x))": "one ')' too many",
    "∀x ((RelaySwimmer(x) ∧ ¬ParticipatedIn(x, finalheatfreerelay)) ↔ ¬Recieved(x, medal)))": (
        "one ')' too many"
    ),
    "∀x (Road(x) → (MadeOfConcrete(x) ∨ MadeOfAsphalt(x))": "one ')' missing",
    "∃x (Country(x) Nearby(medeempire, x) ∧ PlotsToSwallowUp(medeempire, x))": (
        "connective missing between Country(x) and Nearby(...)"
    ),
}
